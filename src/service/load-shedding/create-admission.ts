import type { IncomingMessage, ServerResponse } from 'node:http';
import { Injectable } from '@nestjs/common';
import { type Environment, InjectEnvironment } from '../config/environment.js';
import {
  ApiError,
  ErrorAnswer,
  MetricsService,
  PlantsService,
  type ShedReason,
} from '../../lib/index.js';
import { EventLoopDelay } from './event-loop-delay.js';

type Next = () => void;
type RequestListener = (
  request: IncomingMessage,
  response: ServerResponse,
) => void;

// A few spellings of the one route (case, trailing slash) at most; never one per client.
const MAX_ROUTE_PATHS = 16;

/** A request's path as the routing matches it: no query string, case folded, no trailing slash. */
export function routePathOf(request: IncomingMessage): string {
  const path = (request.url ?? '').split('?')[0].toLowerCase();
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}

// Set once admitted: one admitted in front of the adapter still meets the route's hook.
const admitted = Symbol('admitted');
type AdmittedRequest = IncomingMessage & { [admitted]?: true };

/** A create let in while every work slot was taken: it waits, before any work, for one. */
interface WaitingCreate {
  request: IncomingMessage;
  response: ServerResponse;
  handOn: Next;
  /** Epoch ms it arrived, for CREATE_WAITING_TIMEOUT_MS. */
  since: number;
}

/**
 * Load shedding for POST /plants, before any other work; counts its refusals, which mostly
 * never reach the request log (docs/performance.md#creates-worked-on-at-once).
 */
@Injectable()
export class CreateAdmission {
  /** Creates handed on and not yet closed. */
  private working = 0;
  private readonly waiting: WaitingCreate[] = [];
  private readonly routePaths = new Set<string>();
  // Whether its connection is kept is the front door's early-answer rule (early-answer.ts).
  private readonly refusal = ErrorAnswer.of(ApiError.overloaded());

  private readonly shed: Record<ShedReason, number>;
  /** The EventLoopDelay tick during which a create last met a bound other than the delay. */
  private boundMetAtTick = Number.NEGATIVE_INFINITY;
  /** Refusing every create while the event loop runs late (boundMet). */
  private behind = false;

  constructor(
    private readonly plants: PlantsService,
    @InjectEnvironment() private readonly env: Environment,
    metrics: MetricsService,
    private readonly loop: EventLoopDelay,
  ) {
    this.shed = metrics.shedSinceRead;
    metrics.gauge(
      'plant_creates_waiting',
      'Creates waiting, before any work, for one of CREATE_CONCURRENCY_LIMIT slots',
      () => this.waiting.length,
    );
  }

  /** The first hook of the create's route, before any guard; learns its paths for inFrontOf. */
  atRoute(
    request: AdmittedRequest,
    response: ServerResponse,
    next: Next,
  ): void {
    if (request.method !== 'POST' || request[admitted] === true) {
      next();
      return;
    }
    if (this.routePaths.size < MAX_ROUTE_PATHS)
      this.routePaths.add(routePathOf(request));
    this.admit(request, response, next);
  }

  /** The same decision in front of the adapter, for learned paths: a refusal there skips routing. */
  inFrontOf(listener: RequestListener): RequestListener {
    return (request, response) => {
      if (
        request.method === 'POST' &&
        // The path as sent is the learned one in the common case: no copy made to find it.
        (this.routePaths.has(request.url ?? '') ||
          this.routePaths.has(routePathOf(request)))
      )
        this.admit(request, response, () => listener(request, response));
      else listener(request, response);
    };
  }

  private admit(
    request: AdmittedRequest,
    response: ServerResponse,
    next: Next,
  ): void {
    request[admitted] = true;
    const bound = this.boundMet();
    if (bound !== undefined) this.refuse(response, bound);
    else if (this.working < this.env.CREATE_CONCURRENCY_LIMIT)
      this.start(response, next);
    else
      this.waiting.push({ request, response, handOn: next, since: Date.now() });
  }

  /** The bound a new create would pass, if any: then it is refused before any work. */
  private boundMet(): ShedReason | undefined {
    const { CREATE_CONCURRENCY_LIMIT, CREATE_WAITING_LIMIT } = this.env;
    if (
      this.working + this.waiting.length >=
      CREATE_CONCURRENCY_LIMIT + CREATE_WAITING_LIMIT
    )
      return 'concurrency';
    if (this.plants.isOverloaded) return 'queue';
    // Late with a bound met in the turn the last tick measured: refuse every create until a
    // tick is on time (docs/performance.md#behind-refuse-every-create).
    const delayLimit = this.env.CREATE_EVENT_LOOP_DELAY_LIMIT_MS;
    this.behind =
      delayLimit > 0 &&
      this.loop.delayMs > delayLimit &&
      (this.behind || this.loop.ticks - this.boundMetAtTick <= 1);
    return this.behind ? 'event_loop' : undefined;
  }

  private start(response: ServerResponse, handOn: Next): void {
    this.working += 1;
    response.once('close', () => {
      this.working -= 1;
      this.startWaiting();
    });
    handOn();
  }

  private startWaiting(): void {
    while (
      this.working < this.env.CREATE_CONCURRENCY_LIMIT &&
      this.waiting.length > 0
    ) {
      const { request, response, handOn, since } = this.waiting.shift()!;
      // A client that left while waiting: nothing to answer, nothing to do.
      if (request.socket.destroyed) continue;
      if (Date.now() - since >= this.env.CREATE_WAITING_TIMEOUT_MS)
        this.refuse(response, 'queue');
      else this.start(response, handOn);
    }
  }

  private refuse(response: ServerResponse, bound: ShedReason): void {
    this.shed[bound] += 1;
    this.loop.watch();
    if (bound !== 'event_loop') this.boundMetAtTick = this.loop.ticks;
    this.refusal.writeTo(response);
  }
}
