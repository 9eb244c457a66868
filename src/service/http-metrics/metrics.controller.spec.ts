import type { DataSource } from 'typeorm';
import { ApiError, MetricsService } from '../../lib/index.js';
import type { Environment } from '../config/environment.js';
import { MetricsController } from './metrics.controller.js';

const controllerWith = (env: Partial<Environment>) =>
  new MetricsController(
    new MetricsService({ driver: {} } as DataSource),
    env as Environment,
  );

const answerOf = (action: () => unknown) => {
  try {
    action();
  } catch (error) {
    return {
      status: (error as ApiError).getStatus(),
      headers: (error as ApiError).headers,
    };
  }
  throw new Error('expected an error answer');
};

describe('MetricsController, another method than GET on /metrics', () => {
  it('is answered 405, allowing GET and HEAD', () => {
    const controller = controllerWith({ METRICS_ENABLED: true });
    expect(answerOf(() => controller.rejectOtherMethods())).toEqual({
      status: 405,
      headers: { Allow: 'GET, HEAD' },
    });
  });

  it.each([
    ['metrics are off', { METRICS_ENABLED: false }],
    [
      'metrics are on a port of their own',
      { METRICS_ENABLED: true, METRICS_PORT: 9464 },
    ],
  ])('is answered 404 when %s', (_case, env) => {
    expect(answerOf(() => controllerWith(env).rejectOtherMethods())).toEqual({
      status: 404,
      headers: {},
    });
  });
});
