import type { DynamicModule } from '@nestjs/common';

/**
 * `build` made once per TypeORM connection name (undefined or 'default': the default one).
 * Nest tells dynamic modules apart by their object, so every importer of a connection's
 * module gets the same instance of it: one WriteCircuit, one ApiTokensService.
 */
export function modulePerConnection(
  build: (dataSource?: string) => DynamicModule,
): (dataSource?: string) => DynamicModule {
  const modules = new Map<string, DynamicModule>();
  return (dataSource) => {
    const key = dataSource ?? 'default';
    let module = modules.get(key);
    if (module === undefined) {
      module = build(dataSource);
      modules.set(key, module);
    }
    return module;
  };
}
