import type { RequestListener } from 'node:http';
import type { INestApplication } from '@nestjs/common';
import type { AbstractHttpAdapter } from '@nestjs/core';
import { forTheService } from '../lib/index.js';
import type { HttpAdapterName } from './config/environment.js';
import { RequestTiming } from './http-metrics/request-timing.js';
import { isReadMethod } from './http-server/read-only-path.js';
import {
  type FollowedReply,
  type FollowedRequest,
  RequestLog,
} from './logging/request-log.js';
import { isDocumentationPath } from './openapi/openapi.js';

const { nodeRequestOf, nodeResponseOf } = forTheService;

/** What the adapter's own steps of the front door (6-10) are given, worked out once. */
export interface AdapterDoorSettings {
  /** helmet's headers (security-headers.ts), as Node's setHeaders takes them. */
  readonly securityHeaders: ReadonlyMap<string, string>;
  readonly corsOrigins: readonly string[];
}

/** One HTTP adapter as the service runs it: Nest's adapter, its handler, and its front-door steps 6 to 10. */
export interface ServiceAdapter {
  readonly name: HttpAdapterName;
  readonly nest: AbstractHttpAdapter;
  requestListener(app: INestApplication): RequestListener;
  /**
   * 6. no body parsing before the guards; CORS; the security headers; 7. the documentation
   * routes; 8-9. the request log and timing; 10. load shedding at the create's route.
   */
  openDoor(app: INestApplication, settings: AdapterDoorSettings): void;
}

export function enableCors(
  app: INestApplication,
  origins: readonly string[],
): void {
  if (origins.length === 0) return;
  app.enableCors({
    origin: origins.includes('*') ? '*' : [...origins],
    methods: ['POST'],
    allowedHeaders: ['Authorization', 'Content-Type'],
    exposedHeaders: ['X-Request-Id', 'Retry-After', 'WWW-Authenticate'],
    maxAge: 600,
  });
}

/** Steps 8-9 on both adapters: log and time a request; documentation paths are read-only, unlogged. */
export function atDoor(
  url: string,
  method: string | undefined,
): 'followed' | 'documentation' | 'refused' {
  if (!isDocumentationPath(url)) return 'followed';
  return isReadMethod(method) ? 'documentation' : 'refused';
}

/** What the door step decided: go on, or answer the 405 of a write to a documentation path. */
export type DoorPath = ReturnType<typeof atDoor>;

/** Steps 6 (the security headers, in one call), 8 and 9, for either adapter's hook. */
export function doorStep(
  app: INestApplication,
  { securityHeaders }: AdapterDoorSettings,
): (request: FollowedRequest, reply: FollowedReply) => DoorPath {
  const log = app.get(RequestLog);
  const timing = app.get(RequestTiming);
  return (request, reply) => {
    const response = nodeResponseOf(reply);
    response.setHeaders(securityHeaders as Map<string, string>);
    const { url, method } = nodeRequestOf(request);
    const path = atDoor(url ?? '', method);
    if (path === 'followed') {
      log.follow(request, reply);
      timing.follow(request, response);
    }
    return path;
  };
}
