import type { DynamicModule } from '@nestjs/common';

/** `build` once per TypeORM connection name, so every importer shares one instance (one WriteCircuit). */
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
