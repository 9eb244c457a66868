import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { type Environment, InjectEnvironment } from '../config/environment.js';
import { ApiError } from '../errors/api-error.js';
import {
  type ConnectionAfterAnswer,
  ErrorAnswer,
} from '../http/error-answer.js';
import { bodyLimitBytes, declaredLength } from '../http/request-body.js';
import { MetricsService, type ShedReason } from '../metrics/metrics.service.js';
import { PlantsRepository } from './plants.repository.js';

type RequestListener = (
  request: IncomingMessage,
  response: ServerResponse,
) => void;

/**
 * Load shedding for POST /plants, decided before any other work. Past its capacity the
 * service's main thread is the limit (bench/RESULTS.md): every create taken makes all the
 * others later, and arrivals wait in the kernel's socket buffers where no queue bound can
 * see them. So a create is answered 503 with Retry-After at once, by a listener in front
 * of Express, when creates in progress reach CREATE_CONCURRENCY_LIMIT or when the insert
 * queue is overloaded (PlantsRepository.isOverloaded). A refusal must cost a small
 * fraction of a create, or refusing would itself eat the capacity: so it keeps the
 * connection open when the body is small enough to discard (a reconnect costs the same
 * thread an accept and a handshake). Other routes (health, metrics, documentation) are
 * never refused. Refusals never reach Express's request metrics, so they are counted here
 * (plants_shed_total, by the bound met).
 */
@Injectable()
export class CreateAdmission implements OnApplicationBootstrap {
  private inProgress = 0;
  private readonly bodyLimit: number;
  private readonly refusal = {
    keep: new ErrorAnswer(ApiError.overloaded(), 'keep'),
    close: new ErrorAnswer(ApiError.overloaded(), 'close'),
  } satisfies Record<ConnectionAfterAnswer, ErrorAnswer>;

  private readonly shed: Record<ShedReason, number>;

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly plants: PlantsRepository,
    @InjectEnvironment() private readonly env: Environment,
    metrics: MetricsService,
  ) {
    this.bodyLimit = bodyLimitBytes(env.BODY_LIMIT);
    this.shed = metrics.shedSinceRead;
  }

  onApplicationBootstrap(): void {
    const server = this.adapterHost.httpAdapter?.getHttpServer() as
      Server | undefined;
    if (server === undefined) return;
    const listeners = server.listeners('request') as RequestListener[];
    server.removeAllListeners('request');
    server.on(
      'request',
      (request: IncomingMessage, response: ServerResponse) => {
        if (this.admits(request, response))
          for (const listener of listeners) listener(request, response);
      },
    );
  }

  private admits(request: IncomingMessage, response: ServerResponse): boolean {
    if (request.method !== 'POST' || !request.url?.startsWith('/plants'))
      return true;
    const bound =
      this.inProgress >= this.env.CREATE_CONCURRENCY_LIMIT
        ? 'concurrency'
        : this.plants.isOverloaded
          ? 'queue'
          : undefined;
    if (bound !== undefined) {
      this.shed[bound] += 1;
      this.refuse(request, response);
      return false;
    }
    this.inProgress += 1;
    response.once('close', () => (this.inProgress -= 1));
    return true;
  }

  private refuse(request: IncomingMessage, response: ServerResponse): void {
    const connection = this.connectionAfterRefusal(request);
    // Read and dropped, so that the connection can carry the client's next request.
    if (connection === 'keep') request.resume();
    this.refusal[connection].writeTo(response);
  }

  /**
   * Kept when the body is declared and small (at most BODY_LIMIT): reading it costs less
   * than a new connection. Closed when it is chunked (no size known), larger, or waits for
   * `100 Continue` (the client may never send it).
   */
  private connectionAfterRefusal(
    request: IncomingMessage,
  ): ConnectionAfterAnswer {
    if (
      request.headers['transfer-encoding'] !== undefined ||
      request.headers.expect !== undefined
    )
      return 'close';
    const length = declaredLength(request) ?? 0;
    return length <= this.bodyLimit ? 'keep' : 'close';
  }
}
