import { type DynamicModule, Module } from '@nestjs/common';
import { getRepositoryToken, TypeOrmModule } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { ApiTokenEntity } from './api-token.entity.js';
import { ApiTokensService } from './api-tokens.service.js';

/** One module per connection name: Nest tells dynamic modules apart by their object. */
const modules = new Map<string, DynamicModule>();

/** Managed tokens (the api_tokens table) on a TypeORM connection. */
@Module({})
export class ApiTokensModule {
  /** `dataSource`: the connection's name, as TypeOrmModule.forRoot({ name }) gave it. */
  static forDataSource(dataSource?: string): DynamicModule {
    const key = dataSource ?? 'default';
    const known = modules.get(key);
    if (known !== undefined) return known;
    const module: DynamicModule = {
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
    };
    modules.set(key, module);
    return module;
  }
}
