import { Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { ApiExceptionFilter } from './api-exception.filter.js';

/**
 * The service's answer to what goes wrong on any route: the one exception filter (every
 * failure an Error body), as APP_FILTER. The plant routes bind the same filter themselves,
 * so a host application does not need this module and keeps its own error answers.
 */
@Module({
  providers: [{ provide: APP_FILTER, useClass: ApiExceptionFilter }],
})
export class ApiErrorsModule {}
