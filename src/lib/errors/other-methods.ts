import { RequestMapping, RequestMethod, type Type } from '@nestjs/common';

/** Every method Nest routes by name (all of RequestMethod but ALL). */
export const NAMED_METHODS: readonly RequestMethod[] = Object.values(
  RequestMethod,
).filter(
  (method): method is RequestMethod =>
    typeof method === 'number' && method !== RequestMethod.ALL,
);

/** The methods a path does not serve, HEAD first (else Fastify adds HEAD beside a refusing GET). */
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

/** A 405 route per unserved method, declared after the served ones; not `@All()`, which Fastify refuses beside them. */
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
