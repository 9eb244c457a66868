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

type Next = () => void;
type RequestListener = (
  request: IncomingMessage,
  response: ServerResponse,
) => void;

// Paths kept at most: the route has one, a few more spellings of it (case, a trailing
// slash) at worst; never one per client.
const MAX_ROUTE_PATHS = 16;

/**
 * A request's path as the service's routing matches it (Express's defaults, which
 * TimedFastifyAdapter keeps): without the query string, case folded, a trailing slash
 * dropped.
 */
export function routePathOf(request: IncomingMessage): string {
  const path = (request.url ?? '').split('?')[0].toLowerCase();
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}

// Set on a request once admitted: one admitted in front of the adapter (inFrontOf) still meets
// the route's hook (atRoute).
const admitted = Symbol('admitted');
type AdmittedRequest = IncomingMessage & { [admitted]?: true };

/** A create let in while every work slot was taken: it waits, before any work, for one. */
interface WaitingCreate {
  request: IncomingMessage;
  response: ServerResponse;
  handOn: Next;
  /**
   * Epoch ms it arrived: one that has waited CREATE_WAITING_TIMEOUT_MS when its turn comes
   * is refused instead.
   */
  since: number;
}

/**
 * Load shedding for POST /plants, decided before any other work. Past its capacity the main
 * thread is the limit, and every create taken makes all the others later: so at most
 * CREATE_CONCURRENCY_LIMIT creates are worked on at once, up to CREATE_WAITING_LIMIT more
 * wait their turn in arrival order, before any work (a burst that size is taken, not
 * refused), and past both, or while the insert queue is overloaded
 * (PlantsService.isOverloaded), a create is answered 503 with Retry-After at once. A refusal
 * must cost a small fraction of a create, or refusing would itself eat the capacity: the
 * connection is kept when the body is small enough to discard. Other methods and routes are never
 * refused nor held. Refusals in front of the adapter never reach the request log or metrics (only
 * one at the route's hook, at a path not yet learned, would), so they are counted here
 * (plants_shed_total, by the bound met). Measured:
 * bench/RESULTS.md#2026-11-22-phase-7b-128-creates-worked-on-at-once-128-more-waiting-their-turn-before-any-work
 */
@Injectable()
export class CreateAdmission {
  /** Creates handed on and not yet closed. */
  private working = 0;
  private readonly waiting: WaitingCreate[] = [];
  /** Where the plant route was met, as routePathOf writes it. */
  private readonly routePaths = new Set<string>();
  // Whether its connection is kept is the front door's early-answer rule (early-answer.ts).
  private readonly refusal = ErrorAnswer.of(ApiError.overloaded());

  private readonly shed: Record<ShedReason, number>;

  constructor(
    private readonly plants: PlantsService,
    @InjectEnvironment() private readonly env: Environment,
    metrics: MetricsService,
  ) {
    this.shed = metrics.shedSinceRead;
    metrics.gauge(
      'plant_creates_waiting',
      'Creates waiting, before any work, for one of CREATE_CONCURRENCY_LIMIT slots',
      () => this.waiting.length,
    );
  }

  /**
   * As the first hook of the create's route (the front door puts it on the route wherever
   * Nest mounted it, a global prefix included), before any guard: each path it meets is
   * learned for inFrontOf.
   */
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

  /**
   * The same decision in front of the adapter, for the paths the route was met at (the front
   * door, front-door.ts, puts it on the service's server): a refusal there skips its routing and
   * hooks, which cost about as much again as the refusal itself under overload, where
   * thousands are refused a second. A path not yet learned goes through to atRoute(). Measured:
   * bench/RESULTS.md#2026-11-23-issue-19-the-modules-as-a-library-before-and-after-and-the-standard-body-parser
   */
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
    return this.plants.isOverloaded ? 'queue' : undefined;
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
    this.refusal.writeTo(response);
  }
}
