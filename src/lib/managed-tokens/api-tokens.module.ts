import { Module } from '@nestjs/common';
import { getRepositoryToken, TypeOrmModule } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { modulePerConnection } from '../dynamic-modules/module-per-connection.js';
import { ApiTokenEntity } from './api-token.entity.js';
import { ApiTokensService } from './api-tokens.service.js';

/** Managed tokens (the api_tokens table) on a TypeORM connection. */
@Module({})
export class ApiTokensModule {
  /** `dataSource`: the connection's name, as TypeOrmModule.forRoot({ name }) gave it. */
  static readonly forDataSource = modulePerConnection((dataSource) => ({
    module: ApiTokensModule,
    imports: [TypeOrmModule.forFeature([ApiTokenEntity], dataSource)],
    providers: [
      {
        provide: ApiTokensService,
        inject: [getRepositoryToken(ApiTokenEntity, dataSource)],
        useFactory: (tokens: Repository<ApiTokenEntity>) =>
          new ApiTokensService(tokens),
      },
    ],
    exports: [ApiTokensService],
  }));
}
