import { Injectable, Logger } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';

/** The event a new plant sends through a host's @nestjs/event-emitter: @OnEvent(PLANT_CREATED). */
export const PLANT_CREATED = 'plant.created';

/** A plant stored by this create, sent once after its commit (never for a replay or conflict); the id as a decimal string. */
export class PlantCreatedEvent {
  constructor(
    readonly id: string,
    readonly name: string,
    readonly tag?: string,
  ) {}
}

/** @nestjs/event-emitter is an optional peer, used when the host imported EventEmitterModule. */
const eventEmitter = await import('@nestjs/event-emitter').catch(
  (error: unknown) => {
    if ((error as { code?: unknown }).code === 'ERR_MODULE_NOT_FOUND')
      return undefined;
    throw error;
  },
);

interface Emitter {
  emit(event: string, payload: unknown): boolean;
}

/** Tells the host's event emitter, when it has one, what this module did. */
@Injectable()
export class PlantEvents {
  private readonly logger = new Logger('PlantsModule');
  private readonly emitter: Emitter | undefined;

  constructor(moduleRef: ModuleRef) {
    this.emitter = emitterOf(moduleRef);
  }

  /** After the commit, once per plant stored; a throwing listener is the host's failure, not the create's. */
  created(event: PlantCreatedEvent): void {
    if (this.emitter === undefined) return;
    try {
      this.emitter.emit(PLANT_CREATED, event);
    } catch (error) {
      this.logger.error(`A ${PLANT_CREATED} listener failed.`, error);
    }
  }
}

function emitterOf(moduleRef: ModuleRef): Emitter | undefined {
  if (eventEmitter === undefined) return undefined;
  try {
    return moduleRef.get<Emitter>(eventEmitter.EventEmitter2, {
      strict: false,
    });
  } catch {
    // The package is installed, and EventEmitterModule not imported: no events.
    return undefined;
  }
}
