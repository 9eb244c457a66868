import { RequestMapping, RequestMethod, type Type } from '@nestjs/common';

/** Every method Nest routes by name (all of RequestMethod but ALL). */
export const NAMED_METHODS: readonly RequestMethod[] = Object.values(
  RequestMethod,
).filter(
  (method): method is RequestMethod =>
    typeof method === 'number' && method !== RequestMethod.ALL,
);

/**
 * The methods a path does not serve, HEAD first: a path served to GET is served to HEAD too
 * (both adapters answer it from the GET), and elsewhere Fastify would make a HEAD route
 * beside a refusing GET unless one was declared before it.
 */
function otherMethods(served: readonly RequestMethod[]): RequestMethod[] {
  const others = NAMED_METHODS.filter(
    (method) =>
      !served.includes(method) &&
      !(method === RequestMethod.HEAD && served.includes(RequestMethod.GET)),
  );
  return others.sort(
    (a, b) =>
      Number(b === RequestMethod.HEAD) - Number(a === RequestMethod.HEAD),
  );
}

/**
 * Gives `controller` a route for each method Nest routes but those `served` at `path`,
 * each calling its `refuse` method (which throws the path's 405 with Allow). One route per
 * method, not `@All()`: Fastify refuses an all-methods route on a path that already serves
 * one, Express takes either, and the package runs on both. Declare the served routes first:
 * Nest registers a controller's routes in the order of its methods, and these come last.
 * `decorators` go on each route (say, to leave it out of the OpenAPI document).
 */
export function refuseOtherMethods<T extends object>(
  controller: Type<T>,
  refuse: keyof T & string,
  served: readonly RequestMethod[],
  path?: string | string[],
  decorators: readonly MethodDecorator[] = [],
): void {
  for (const method of otherMethods(served)) {
    const name = `${refuse}${RequestMethod[method]}`;
    const descriptor: PropertyDescriptor = {
      value: function refuseOtherMethod(this: T): unknown {
        return (this[refuse] as () => unknown)();
      },
      writable: true,
      configurable: true,
    };
    Object.defineProperty(controller.prototype, name, descriptor);
    for (const decorate of [RequestMapping({ path, method }), ...decorators])
      decorate(controller.prototype, name, descriptor);
  }
}
