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
  /** Give the DataSource out unconnected (`migrate` ignored): DatabaseStartup connects it. */
  later?: boolean;
}

/** TypeORM over DATABASE_URL or the embedded server; `migrate` first (not for the token CLI: a host migrates). */
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

/** The service's database, connected once the process listens (DatabaseStartup). */
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
