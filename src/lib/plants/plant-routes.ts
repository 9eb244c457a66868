import { Controller, type Type } from '@nestjs/common';
import { PLANTS_PATH } from './plants-path.js';

/** The controller registered for the create, wherever its `path` put it: where load shedding goes. */
export class PlantRoutes {
  constructor(readonly create: Type<object>) {}
}

/** `controller` at `path`: a subclass inheriting its methods' routes, guards, filters and OpenAPI metadata. */
export function routedAt<T extends Type<object>>(
  controller: T,
  path: string,
): T {
  if (path === PLANTS_PATH) return controller;
  const routed = class extends controller {};
  Object.defineProperty(routed, 'name', { value: controller.name });
  Controller(path)(routed);
  return routed;
}
