import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { type FrameworkRequest, JsonBodyReader } from './json-body.reader.js';
import { nodeResponseOf } from '../http-request/node-http.js';

/**
 * Reads the JSON body of a route marked @AcceptsJson() into `request.body`, and lets
 * through every request it does not refuse (400, 413, 415). Nest runs middleware, where
 * body parsers usually sit, before guards; this route guard runs after the global ones
 * (the bearer check, the rate limits) and before pipes (validation), so a request without
 * a valid token gets 401 whatever its body, and its body is never read.
 *
 * A guard, where a Nest reader would look for an interceptor, for a measured reason: the
 * same code as an interceptor cost about a third more CPU per request (rxjs and async
 * resources around every handler; `npm run bench:check` A/B, bench/RESULTS.md notes).
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
