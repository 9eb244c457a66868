import { type DynamicModule, Module } from '@nestjs/common';
import { getDataSourceToken, TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { PostgresDataSourceOptions } from 'typeorm/driver/postgres/PostgresDataSourceOptions.js';
import { WriteCircuit, WriteCircuitModule } from '../../lib/index.js';
import { Environment } from '../config/environment.js';
import { dataSourceOptions } from './data-source-options.js';
import { DatabaseServer } from './database-server.js';
import { DatabaseStartup } from './database-startup.js';
import { runMigrations } from './migration-runner.js';

// Imported by TypeORM's own module only, so Nest shuts it down after TypeORM's pool.
@Module({ providers: [DatabaseServer], exports: [DatabaseServer] })
class DatabaseServerModule {}

export interface DatabaseConnectionOptions {
  /** Bring the schema up to date (under an advisory lock) before connecting. */
  migrate: boolean;
  /** The DataSource's schema, where the package's tables are; the default one if unset. */
  schema?: string;
  /**
   * Give the DataSource out before it connects, `migrate` ignored: DatabaseStartup migrates
   * and connects it, trying again while the database cannot be reached.
   */
  later?: boolean;
}

/**
 * TypeORM over PostgreSQL at DATABASE_URL, or the embedded server. With `migrate`, the
 * schema is brought up to date before the connections open, so no request ever meets an
 * old schema; the token CLI does not migrate, since in a host application the schema is
 * the host's to migrate.
 */
export function databaseConnection({
  migrate,
  schema,
  later = false,
}: DatabaseConnectionOptions): DynamicModule {
  return TypeOrmModule.forRootAsync({
    imports: [DatabaseServerModule],
    inject: [Environment, DatabaseServer],
    useFactory: async (env: Environment, server: DatabaseServer) => ({
      ...dataSourceOptions(await server.connectionUrl(), env),
      schema,
      autoLoadEntities: true,
      retryAttempts: 5,
      retryDelay: 2_000,
      manualInitialization: later,
    }),
    dataSourceFactory: async (options) => {
      const postgres = options as PostgresDataSourceOptions;
      if (later) return new DataSource(postgres);
      if (migrate) await runMigrations(postgres);
      return new DataSource(postgres).initialize();
    },
  });
}

/**
 * The service's database: migrated and connected once the process listens, and for as long
 * as that takes (DatabaseStartup), so that a replica starts during a database outage.
 */
@Module({
  imports: [
    databaseConnection({ migrate: true, later: true }),
    WriteCircuitModule.forDataSource(),
  ],
  providers: [
    {
      provide: DatabaseStartup,
      inject: [getDataSourceToken(), WriteCircuit],
      useFactory: (dataSource: DataSource, writeCircuit: WriteCircuit) =>
        new DatabaseStartup(dataSource, writeCircuit),
    },
  ],
  exports: [DatabaseStartup],
})
export class DatabaseModule {}
