import { type DynamicModule, Module } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { poolOf } from './bounded-query.js';
import { DATABASE_HEALTH_DEFAULTS, DatabaseHealth } from './database-health.js';
import { schemaQualified } from './schema-qualified.js';

/**
 * Nest tells dynamic modules apart by the object forDataSource returns: one per connection
 * name, so that every importer of a connection's health shares one DatabaseHealth.
 */
const modules = new Map<string, DynamicModule>();

/**
 * One DatabaseHealth per TypeORM connection, shared by whoever imports it: the plants'
 * writes teach it, readiness asks it.
 */
@Module({})
export class DatabaseHealthModule {
  /** `dataSource`: the connection's name, as TypeOrmModule.forRoot({ name }) gave it. */
  static forDataSource(dataSource?: string): DynamicModule {
    const key = dataSource ?? 'default';
    const known = modules.get(key);
    if (known !== undefined) return known;
    const module: DynamicModule = {
      module: DatabaseHealthModule,
      providers: [
        {
          provide: DatabaseHealth,
          inject: [getDataSourceToken(dataSource)],
          useFactory: (source: DataSource) =>
            new DatabaseHealth(
              () => poolOf(source),
              DATABASE_HEALTH_DEFAULTS,
              schemaQualified(source, 'commit_probe'),
            ),
        },
      ],
      exports: [DatabaseHealth],
    };
    modules.set(key, module);
    return module;
  }
}
