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

/** Steps 6, 8 and 9 of one request: go on, or answer the 405 of a write to a documentation path. */
export type DoorStep = (
  request: FollowedRequest,
  reply: FollowedReply,
) => DoorPath;

/**
 * One HTTP adapter as the service runs it: Nest's adapter, its handler, and the pieces of
 * the front door's steps 6 to 10 that differ per adapter (the front door calls them in order).
 */
export interface ServiceAdapter {
  readonly name: HttpAdapterName;
  readonly nest: AbstractHttpAdapter;
  requestListener(app: INestApplication): RequestListener;
  /** 6. No body parsed before the guards, and no header of the adapter's own. */
  leaveBodiesUnread(app: INestApplication): void;
  /** 6, 8, 9. `step` for every request, first; a refused path answered 405. */
  runFirst(app: INestApplication, step: DoorStep): void;
  /** 10. Load shedding as the create route's first step, wherever Nest mounts it. */
  shedAtCreateRoute(app: INestApplication): void;
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
  securityHeaders: ReadonlyMap<string, string>,
): DoorStep {
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
