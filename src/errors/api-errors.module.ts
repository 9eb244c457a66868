import { Module } from '@nestjs/common';
import { APP_FILTER, APP_PIPE } from '@nestjs/core';
import { createValidationPipe } from '../http/validation.pipe.js';
import { ApiExceptionFilter } from './api-exception.filter.js';

/**
 * How the API answers what goes wrong: the one exception filter (every failure an Error
 * body) and the validation pipe (a bad @Body() DTO is a 400 naming its rules). Registered
 * as APP_FILTER and APP_PIPE, so they apply to every route of the application importing
 * this: AppModule, or another team's root module that wants the same answers.
 */
@Module({
  providers: [
    { provide: APP_FILTER, useClass: ApiExceptionFilter },
    { provide: APP_PIPE, useFactory: createValidationPipe },
  ],
})
export class ApiErrorsModule {}
