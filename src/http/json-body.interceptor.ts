import {
  applyDecorators,
  CallHandler,
  ExecutionContext,
  Injectable,
  NestInterceptor,
  UseInterceptors,
} from '@nestjs/common';
import { ApiConsumes } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import type { Observable } from 'rxjs';
import { JsonBodyReader } from './json-body.reader.js';

/**
 * Nest runs middleware (where body parsers usually sit) before guards. Parsing here, in an
 * interceptor, puts the bearer check first: a request without a valid token gets 401
 * whatever its body, and its body is never read.
 */
@Injectable()
export class JsonBodyInterceptor implements NestInterceptor {
  constructor(private readonly reader: JsonBodyReader) {}

  async intercept(
    context: ExecutionContext,
    next: CallHandler,
  ): Promise<Observable<unknown>> {
    const http = context.switchToHttp();
    const request = http.getRequest<Request>();
    request.body = await this.reader.read(
      request,
      http.getResponse<Response>(),
    );
    return next.handle();
  }
}

/** Marks a handler whose @Body() is one JSON object, read after authentication. */
export const AcceptsJson = (): MethodDecorator =>
  applyDecorators(
    UseInterceptors(JsonBodyInterceptor),
    ApiConsumes('application/json'),
  );
