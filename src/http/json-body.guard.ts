import {
  applyDecorators,
  CanActivate,
  ExecutionContext,
  Injectable,
  UseGuards,
} from '@nestjs/common';
import { ApiConsumes } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { JsonBodyReader } from './json-body.reader.js';

/**
 * Reads the JSON body of a route marked @AcceptsJson(). Nest runs middleware, where body
 * parsers usually sit, before guards; a route guard runs after the global ones, so the
 * bearer check comes first: a request without a valid token gets 401 whatever its body,
 * and its body is never read. A guard rather than an interceptor because interceptors
 * wrap the handler in rxjs, which cost 5% of the CPU per request (bench/RESULTS.md).
 * It lets every request through that it does not refuse (400, 413, 415).
 */
@Injectable()
export class JsonBodyGuard implements CanActivate {
  constructor(private readonly reader: JsonBodyReader) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    const request = http.getRequest<Request>();
    request.body = await this.reader.read(
      request,
      http.getResponse<Response>(),
    );
    return true;
  }
}

/** Marks a handler whose @Body() is one JSON object, read after authentication. */
export const AcceptsJson = (): MethodDecorator =>
  applyDecorators(UseGuards(JsonBodyGuard), ApiConsumes('application/json'));
