import { Controller, type Type } from '@nestjs/common';
import { PLANTS_PATH } from './plants-path.js';

/**
 * The controller a PlantsModule registered for the create, wherever its `path` put it: what
 * the service puts its load shedding on (shedAtCreateRoute), so that it follows the route.
 */
export class PlantRoutes {
  constructor(readonly create: Type<object>) {}
}

/**
 * `controller` answering at `path` rather than at PLANTS_PATH: a subclass with a path of its
 * own, which inherits the routes, guards, filters and OpenAPI metadata of its methods.
 */
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
