import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { type FrameworkRequest, JsonBodyReader } from './json-body.reader.js';
import { nodeResponseOf } from '../http-request/node-http.js';

/**
 * An @AcceptsJson() route's body, read after the bearer check; a guard, not an interceptor: cheaper
 * (bench/RESULTS.md#2026-11-22-the-json-body-read-in-a-guard-or-in-an-interceptor-issue-11-item-4).
 */
@Injectable()
export class JsonBodyGuard implements CanActivate {
  constructor(private readonly reader: JsonBodyReader) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    // The handler's arguments as they are: switchToHttp() makes three closures per call.
    const request = context.getArgByIndex<FrameworkRequest>(0);
    request.body = await this.reader.read(
      request,
      nodeResponseOf(context.getArgByIndex(1)),
    );
    return true;
  }
}
