import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ApiTokenEntity } from './api-token.entity.js';
import { ApiTokensService } from './api-tokens.service.js';

@Module({
  imports: [TypeOrmModule.forFeature([ApiTokenEntity])],
  providers: [ApiTokensService],
  exports: [ApiTokensService],
})
export class ApiTokensModule {}
