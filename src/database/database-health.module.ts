import { Module } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { poolOf } from './bounded-query.js';
import { DATABASE_HEALTH_DEFAULTS, DatabaseHealth } from './database-health.js';
import { schemaQualified } from './schema-qualified.js';

/**
 * One DatabaseHealth for the host's TypeORM connection, shared by whoever imports this
 * module: the plants' writes teach it, readiness asks it.
 */
@Module({
  providers: [
    {
      provide: DatabaseHealth,
      inject: [getDataSourceToken()],
      useFactory: (dataSource: DataSource) =>
        new DatabaseHealth(
          () => poolOf(dataSource),
          DATABASE_HEALTH_DEFAULTS,
          schemaQualified(dataSource, 'commit_probe'),
        ),
    },
  ],
  exports: [DatabaseHealth],
})
export class DatabaseHealthModule {}
