import { Module } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { modulePerConnection } from '../common/module-per-connection.js';
import { poolOf } from './bounded-query.js';
import { DATABASE_HEALTH_DEFAULTS, DatabaseHealth } from './database-health.js';
import { schemaQualified } from './schema-qualified.js';

/**
 * One DatabaseHealth per TypeORM connection, shared by whoever imports it: the plants'
 * writes teach it, readiness asks it.
 */
@Module({})
export class DatabaseHealthModule {
  /** `dataSource`: the connection's name, as TypeOrmModule.forRoot({ name }) gave it. */
  static readonly forDataSource = modulePerConnection((dataSource) => ({
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
  }));
}
