/** The event a new plant sends through a host's @nestjs/event-emitter: @OnEvent(PLANT_CREATED). */
export const PLANT_CREATED = 'plant.created';

/**
 * A plant that was stored by this create, sent once, after its commit: never for a replay
 * of a stored plant, nor for a conflict. The id is exact, as a decimal string.
 */
export class PlantCreatedEvent {
  constructor(
    readonly id: string,
    readonly name: string,
    readonly tag?: string,
  ) {}
}
