import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { PostgresDataSourceOptions } from 'typeorm/driver/postgres/PostgresDataSourceOptions.js';
import { Environment } from '../config/environment.js';
import { dataSourceOptions } from './data-source-options.js';
import { DatabaseServer } from './database-server.js';
import { runMigrations } from './migration-runner.js';

// Imported by TypeORM's own module only, so Nest shuts it down after TypeORM's pool.
@Module({ providers: [DatabaseServer], exports: [DatabaseServer] })
class DatabaseServerModule {}

/**
 * TypeORM over PostgreSQL. The schema is brought up to date (under an advisory lock)
 * before the service's own connections open, so no request ever meets an old schema.
 */
@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      imports: [DatabaseServerModule],
      inject: [Environment, DatabaseServer],
      useFactory: async (env: Environment, server: DatabaseServer) => ({
        ...dataSourceOptions(await server.connectionUrl(), env),
        autoLoadEntities: true,
        retryAttempts: 5,
        retryDelay: 2_000,
      }),
      dataSourceFactory: async (options) => {
        const postgres = options as PostgresDataSourceOptions;
        await runMigrations(postgres);
        return new DataSource(postgres).initialize();
      },
    }),
  ],
})
export class DatabaseModule {}
