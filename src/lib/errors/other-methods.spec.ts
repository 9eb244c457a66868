import 'reflect-metadata';
import { Controller, RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants.js';
import { refuseOtherMethods } from './other-methods.js';

/** The routes Nest would register for a controller's prototype: [method, path, handler]. */
function routesOf(controller: {
  prototype: object;
}): [string, unknown, string][] {
  const prototype = controller.prototype as Record<string, unknown>;
  return Object.getOwnPropertyNames(prototype)
    .filter((name) => name !== 'constructor')
    .flatMap((name) => {
      const handler = prototype[name];
      const method = Reflect.getMetadata(METHOD_METADATA, handler as object) as
        RequestMethod | undefined;
      if (method === undefined) return [];
      return [
        [
          RequestMethod[method],
          Reflect.getMetadata(PATH_METADATA, handler as object),
          name,
        ] as [string, unknown, string],
      ];
    });
}

describe('refuseOtherMethods', () => {
  it('gives a POST path a route for every other method Nest names, HEAD first, none for POST or ALL', () => {
    @Controller('things')
    class Things {
      refuse(): string {
        return 'refused';
      }
    }
    refuseOtherMethods(Things, 'refuse', [RequestMethod.POST]);
    const routes = routesOf(Things);
    const methods = routes.map(([method]) => method);
    expect(methods[0]).toBe('HEAD');
    expect([...methods].sort()).toEqual(
      Object.keys(RequestMethod)
        .filter((name) => Number.isNaN(Number(name)))
        .filter((name) => name !== 'POST' && name !== 'ALL')
        .sort(),
    );
    // Each route calls the controller's own refusal, on the instance.
    const things = new Things() as unknown as Record<string, () => string>;
    for (const [, , name] of routes) expect(things[name]()).toBe('refused');
  });

  it('leaves HEAD to the GET of a path served to GET, and puts the routes at the paths given', () => {
    class Probes {
      refuse(): never {
        throw new Error('405');
      }
    }
    refuseOtherMethods(Probes, 'refuse', [RequestMethod.GET], ['live', '']);
    const routes = routesOf(Probes);
    const methods = routes.map(([method]) => method);
    expect(methods).not.toContain('HEAD');
    expect(methods).not.toContain('GET');
    expect(methods).toContain('DELETE');
    for (const [, path] of routes) expect(path).toEqual(['live', '']);
  });
});
