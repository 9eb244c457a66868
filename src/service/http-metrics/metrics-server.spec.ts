import { Logger } from '@nestjs/common';
import { freePort } from '../../../test-kit/free-port.mjs';
import { validateEnvironment } from '../config/environment.js';
import { MetricsServer } from './metrics-server.js';
import type { MetricsService } from '../../lib/index.js';

describe('MetricsServer (METRICS_PORT)', () => {
  it('answers a scrape that fails with the Error body of a 500, and logs why', async () => {
    const port = await freePort();
    const failing = {
      render: () => Promise.reject(new Error('collector broke')),
    } as unknown as MetricsService;
    const logged = vi
      .spyOn(Logger.prototype, 'error')
      .mockImplementation(() => {});
    const server = new MetricsServer(
      failing,
      validateEnvironment({ METRICS_PORT: String(port), HOST: '127.0.0.1' }),
    );
    await server.onApplicationBootstrap();
    try {
      const answer = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(answer.status).toBe(500);
      expect(answer.headers.get('content-type')).toBe(
        'application/json; charset=utf-8',
      );
      expect(await answer.json()).toEqual({
        error: 500,
        message: expect.any(String),
      });
      expect(logged).toHaveBeenCalledWith(
        'Unexpected error on GET /metrics',
        expect.stringContaining('collector broke'),
      );
    } finally {
      logged.mockRestore();
      await server.onApplicationShutdown();
    }
  });
});
