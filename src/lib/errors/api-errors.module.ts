import { Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { ApiExceptionFilter } from './api-exception.filter.js';

/** The one exception filter as APP_FILTER; the plant routes bind it themselves, so hosts need not. */
@Module({
  providers: [{ provide: APP_FILTER, useClass: ApiExceptionFilter }],
})
export class ApiErrorsModule {}
