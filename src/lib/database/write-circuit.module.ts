import { Module } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { modulePerConnection } from '../dynamic-modules/module-per-connection.js';
import { listenForBrokenConnections, poolOf } from './bounded-query.js';
import { WRITE_CIRCUIT_DEFAULTS, WriteCircuit } from './write-circuit.js';
import { schemaQualified } from './schema-qualified.js';

/** One WriteCircuit per TypeORM connection: the plants' writes teach it, readiness asks it. */
@Module({})
export class WriteCircuitModule {
  /** `dataSource`: the connection's name, as TypeOrmModule.forRoot({ name }) gave it. */
  static readonly forDataSource = modulePerConnection((dataSource) => ({
    module: WriteCircuitModule,
    providers: [
      {
        provide: WriteCircuit,
        inject: [getDataSourceToken(dataSource)],
        useFactory: (source: DataSource) => {
          // See listenForBrokenConnections; a DataSource opened later is its opener's job.
          if (source.isInitialized) listenForBrokenConnections(poolOf(source));
          return new WriteCircuit(
            () => poolOf(source),
            WRITE_CIRCUIT_DEFAULTS,
            schemaQualified(source, 'commit_probe'),
          );
        },
      },
    ],
    exports: [WriteCircuit],
  }));
}
