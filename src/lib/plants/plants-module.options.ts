import type { Type } from '@nestjs/common';
import { definedOnly } from '../dynamic-modules/defined-only.js';
import { SettingsOf } from '../dynamic-modules/module-options.js';
import { bodyLimitBytes, isBodyLimit } from '../request-body/body-limit.js';
import { NewPlant } from './dto/new-plant.dto.js';

/** How PlantsModule behaves; every field has a default, so `PlantsModule.forRoot()` needs none. */
export interface PlantsModuleOptions {
  /** Largest accepted NewPlant body: bytes, or with a unit (16kb, 1mb; a kb is 1024 bytes). */
  bodyLimit?: string;
  /** The whole database part of one create (pool wait, statements, retries); past it, 503. */
  databaseRequestTimeoutMs?: number;
  /** Rows waiting for an INSERT statement slot; past it, new creates get 503 at once. */
  insertQueueLimit?: number;
  /** Longest a row waits for a statement slot; past it, 503 (never written). */
  insertQueueWaitMs?: number;
  /** The class a create's body is validated against: NewPlant, or a host's subclass with rules of its own. */
  newPlant?: Type<NewPlant>;
}

/** Chosen when the module is defined (forRoot and forRootAsync alike): they decide its imports and scope. */
export interface PlantsModuleExtras {
  /** true: PlantsService injectable in every module, as ConfigModule's isGlobal. */
  isGlobal?: boolean;
  /** The TypeORM connection name of the plants table; default: the default connection. */
  dataSource?: string;
  /** Where the route is, below a global prefix: POST {path}, and 405 for other methods. */
  path?: string;
}

/** The defaults, and the service's: its settings table reads them from here. */
export const PLANTS_DEFAULTS: Readonly<Required<PlantsModuleOptions>> = {
  bodyLimit: '16kb',
  databaseRequestTimeoutMs: 2_000,
  insertQueueLimit: 1_000,
  insertQueueWaitMs: 1_000,
  newPlant: NewPlant,
};

/** The options with every default filled in, checked once when the module starts. */
export class PlantsSettings extends SettingsOf<
  Required<PlantsModuleOptions> & { bodyLimitBytes: number }
>() {
  constructor(options: PlantsModuleOptions = {}) {
    const given = { ...PLANTS_DEFAULTS, ...definedOnly(options) };
    if (!isBodyLimit(given.bodyLimit)) {
      throw new Error(
        `PlantsModule: bodyLimit must be a size such as 16384, 16kb or 1mb.`,
      );
    }
    for (const key of [
      'databaseRequestTimeoutMs',
      'insertQueueLimit',
      'insertQueueWaitMs',
    ] as const) {
      if (!Number.isSafeInteger(given[key]) || given[key] < 1) {
        throw new Error(`PlantsModule: ${key} must be a positive integer.`);
      }
    }
    if (
      given.newPlant !== NewPlant &&
      !(given.newPlant?.prototype instanceof NewPlant)
    ) {
      throw new Error(
        'PlantsModule: newPlant must be NewPlant or a class that extends it.',
      );
    }
    super({
      bodyLimit: given.bodyLimit,
      bodyLimitBytes: bodyLimitBytes(given.bodyLimit),
      databaseRequestTimeoutMs: given.databaseRequestTimeoutMs,
      insertQueueLimit: given.insertQueueLimit,
      insertQueueWaitMs: given.insertQueueWaitMs,
      newPlant: given.newPlant,
    });
  }
}
