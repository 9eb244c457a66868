import { Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import type { MockInstance } from 'vitest';
import { freePort } from '../../../test-kit/free-port.mjs';
import { connectError, RawConnection } from '../../../test/support/raw-http.js';
import { eventually } from '../../../test/support/poll.js';
import { validateEnvironment } from '../config/environment.js';
import { MetricsServer } from './metrics-server.js';
import { MetricsService } from '../../lib/index.js';

const PROMETHEUS_TEXT = 'text/plain; version=0.0.4; charset=utf-8';

/** The context Nest writes beside a line: the name a class gave its Logger. */
const contextOf = (logger: Logger): unknown =>
  (logger as unknown as { context?: string }).context;

describe('MetricsServer (METRICS_PORT)', () => {
  let logged: string[];
  beforeEach(() => {
    logged = [];
    vi.spyOn(Logger.prototype, 'log').mockImplementation(function (
      this: Logger,
      message: unknown,
    ) {
      logged.push(`${String(contextOf(this))}: ${String(message)}`);
    });
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });

  async function serving(
    metrics: MetricsService,
    env: Record<string, string> = {},
  ): Promise<{ server: MetricsServer; port: number }> {
    const port = await freePort();
    const server = new MetricsServer(
      metrics,
      validateEnvironment({
        METRICS_PORT: String(port),
        HOST: '127.0.0.1',
        ...env,
      }),
    );
    await server.onApplicationBootstrap();
    return { server, port };
  }

  it('serves the registry at /metrics, with or without a query, HEAD without the body, and says where', async () => {
    const metrics = new MetricsService({ driver: {} } as DataSource);
    metrics.gauge('spec_gauge', 'a gauge of the spec', () => 7);
    const { server, port } = await serving(metrics);
    try {
      expect(logged).toEqual([`MetricsServer: Metrics on port ${port}`]);
      for (const path of ['/metrics', '/metrics?name[]=spec_gauge']) {
        const answer = await fetch(`http://127.0.0.1:${port}${path}`);
        expect(answer.status).toBe(200);
        expect(answer.headers.get('content-type')).toBe(PROMETHEUS_TEXT);
        expect(await answer.text()).toContain(
          '# HELP spec_gauge a gauge of the spec\n# TYPE spec_gauge gauge\nspec_gauge 7\n',
        );
      }
      const head = await fetch(`http://127.0.0.1:${port}/metrics`, {
        method: 'HEAD',
      });
      expect(head.status).toBe(200);
      expect(head.headers.get('content-type')).toBe(PROMETHEUS_TEXT);
      expect(await head.text()).toBe('');
    } finally {
      await server.onApplicationShutdown();
    }
  });

  it('answers another method on /metrics 405 with Allow, and any other path 404, with the Error body', async () => {
    const { server, port } = await serving(
      new MetricsService({ driver: {} } as DataSource),
    );
    try {
      const post = await fetch(`http://127.0.0.1:${port}/metrics`, {
        method: 'POST',
      });
      expect(post.status).toBe(405);
      expect(post.headers.get('allow')).toBe('GET, HEAD');
      expect(await post.json()).toEqual({
        error: 405,
        message: 'This method is not allowed on this path.',
      });
      for (const [method, path] of [
        ['GET', '/'],
        ['GET', '/metrics/x'],
        ['GET', '/metricsx'],
        ['POST', '/other'],
      ]) {
        const answer = await fetch(`http://127.0.0.1:${port}${path}`, {
          method,
        });
        expect({ method, path, status: answer.status }).toEqual({
          method,
          path,
          status: 404,
        });
        expect(answer.headers.get('content-type')).toBe(
          'application/json; charset=utf-8',
        );
        expect(await answer.json()).toEqual({
          error: 404,
          message: 'No resource exists at this path.',
        });
      }
    } finally {
      await server.onApplicationShutdown();
    }
  });

  /**
   * Serves a registry whose every render fails with `reason` and runs `scrape` on its port,
   * Logger's error written nowhere but to the spy it is given.
   */
  async function whileRenderFails(
    reason: unknown,
    scrape: (
      port: number,
      errors: MockInstance<Logger['error']>,
    ) => Promise<void>,
  ): Promise<void> {
    const failing = {
      render: () => Promise.reject(reason),
    } as unknown as MetricsService;
    const errors = vi
      .spyOn(Logger.prototype, 'error')
      .mockImplementation(() => {});
    const { server, port } = await serving(failing);
    try {
      await scrape(port, errors);
    } finally {
      await server.onApplicationShutdown();
    }
  }

  it('answers a scrape that fails with the Error body of a 500, and logs why', async () => {
    await whileRenderFails(
      new Error('collector broke'),
      async (port, errors) => {
        const answer = await fetch(`http://127.0.0.1:${port}/metrics`);
        expect(answer.status).toBe(500);
        expect(answer.headers.get('content-type')).toBe(
          'application/json; charset=utf-8',
        );
        expect(await answer.json()).toEqual({
          error: 500,
          message:
            'The server failed to handle the request; it has been logged.',
        });
        expect(errors).toHaveBeenCalledWith(
          'Unexpected error on GET /metrics',
          expect.stringContaining('collector broke'),
        );
        expect(errors.mock.calls[0][1]).toMatch(
          /^Error: collector broke\n {4}at /,
        );
      },
    );
  });

  it('logs a failure that is not an Error as its text', async () => {
    await whileRenderFails('no registry', async (port, errors) => {
      expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(
        500,
      );
      expect(errors.mock.calls).toEqual([
        ['Unexpected error on GET /metrics', 'no registry'],
      ]);
    });
  });

  it('closes its port at shutdown, cutting a scrape still running', async () => {
    const rendering: (() => void)[] = [];
    const slow = {
      render: () =>
        new Promise((resolve) =>
          rendering.push(() =>
            resolve({ contentType: 'text/plain', body: '' }),
          ),
        ),
    } as unknown as MetricsService;
    const { server, port } = await serving(slow);
    const connection = await RawConnection.open(port);
    connection.write('GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n');
    await eventually('the scrape to start', () =>
      rendering.length > 0 ? true : undefined,
    );
    await server.onApplicationShutdown();
    expect(await connection.closed).toBe('');
    expect(await connectError(port)).toBe('ECONNREFUSED');
    rendering[0]();
  });

  it.each([
    ['METRICS_PORT is unset', { METRICS_PORT: '' }],
    ['metrics are off', { METRICS_ENABLED: 'false' }],
  ])('opens no port when %s', async (_case, env) => {
    const port = await freePort();
    const server = new MetricsServer(
      new MetricsService({ driver: {} } as DataSource),
      validateEnvironment({ HOST: '127.0.0.1', ...env }),
    );
    await server.onApplicationBootstrap();
    expect(await connectError(port)).toBe('ECONNREFUSED');
    expect(logged).toEqual([]);
    // Nothing to close.
    await server.onApplicationShutdown();
  });
});
