import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { type Environment, InjectEnvironment } from '../config/environment.js';
import { ApiError } from '../errors/api-error.js';
import { writeErrorAnswer } from '../http/error-answer.js';
import { PlantsRepository } from './plants.repository.js';

type RequestListener = (
  request: IncomingMessage,
  response: ServerResponse,
) => void;

/**
 * Load shedding for POST /plants, decided before any other work. Past its capacity the
 * service's main thread is the limit (bench/RESULTS.md): every create taken makes all the
 * others later, and arrivals wait in the kernel's socket buffers where no queue bound can
 * see them. So creates in progress are bounded (CREATE_CONCURRENCY_LIMIT), and so is the
 * insert queue (PlantsRepository.isOverloaded); past either, a create is answered 503
 * with Retry-After at once, by a listener in front of Express: a refusal must cost a small
 * fraction of a create, or refusing would itself eat the capacity. Other routes (health,
 * metrics, documentation) are never refused.
 */
@Injectable()
export class CreateAdmission implements OnApplicationBootstrap {
  private inProgress = 0;

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly plants: PlantsRepository,
    @InjectEnvironment() private readonly env: Environment,
  ) {}

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
    if (
      this.inProgress >= this.env.CREATE_CONCURRENCY_LIMIT ||
      this.plants.isOverloaded
    ) {
      // The body is not read, so the connection closes (writeErrorAnswer says so).
      writeErrorAnswer(response, ApiError.overloaded());
      return false;
    }
    this.inProgress += 1;
    response.once('close', () => (this.inProgress -= 1));
    return true;
  }
}
