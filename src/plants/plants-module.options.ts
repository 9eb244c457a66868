import { ConfigurableModuleBuilder } from '@nestjs/common';
import { definedOnly } from '../common/defined-only.js';
import {
  buildConfigurableModule,
  SettingsOf,
} from '../common/module-options.js';
import { bodyLimitBytes, isBodyLimit } from '../request-body/request-body.js';

/**
 * How PlantsModule behaves; every field has a default, so `PlantsModule.forRoot()` needs
 * none. The service passes its validated environment here (AppModule); a host passes its own.
 */
export interface PlantsModuleOptions {
  /** Largest accepted NewPlant body: bytes, or with a unit (16kb, 1mb; a kb is 1024 bytes). */
  bodyLimit?: string;
  /** The whole database part of one create (pool wait, statements, retries); past it, 503. */
  databaseRequestTimeoutMs?: number;
  /** Rows waiting for an INSERT statement slot; past it, new creates get 503 at once. */
  insertQueueLimit?: number;
  /** Longest a row waits for a statement slot; past it, 503 (never written). */
  insertQueueWaitMs?: number;
}

/** The defaults, and the service's: its settings table reads them from here. */
export const PLANTS_DEFAULTS: Readonly<Required<PlantsModuleOptions>> = {
  bodyLimit: '16kb',
  databaseRequestTimeoutMs: 2_000,
  insertQueueLimit: 1_000,
  insertQueueWaitMs: 1_000,
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
    super({
      bodyLimit: given.bodyLimit,
      bodyLimitBytes: bodyLimitBytes(given.bodyLimit),
      databaseRequestTimeoutMs: given.databaseRequestTimeoutMs,
      insertQueueLimit: given.insertQueueLimit,
      insertQueueWaitMs: given.insertQueueWaitMs,
    });
  }
}

export const {
  ConfigurableModuleClass: ConfigurablePlantsModule,
  MODULE_OPTIONS_TOKEN: PLANTS_MODULE_OPTIONS,
} = buildConfigurableModule(
  new ConfigurableModuleBuilder<PlantsModuleOptions>({ moduleName: 'Plants' }),
);
