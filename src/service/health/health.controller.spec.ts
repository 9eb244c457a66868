import {
  ApiError,
  type MetricsService,
  type TokenVerifier,
  type WriteCircuit,
} from '../../lib/index.js';
import type { Environment } from '../config/environment.js';
import type { DatabaseStartup } from '../database/database-startup.js';
import { ShutdownState } from '../lifecycle/shutdown-state.js';
import { HealthController } from './health.controller.js';

/** What each part of the replica says, as the test sets it. */
interface Replica {
  started: boolean;
  tokensReady: boolean;
  tokensCurrent: boolean;
  canCommit: boolean;
  /** What the commit probe does: undefined commits, an error is the database's. */
  probe?: Error;
}

function healthOf(instanceId?: string) {
  const replica: Replica = {
    started: true,
    tokensReady: true,
    tokensCurrent: true,
    canCommit: true,
  };
  const shutdown = new ShutdownState();
  const gauges = new Map<string, () => number | undefined>();
  const controller = new HealthController(
    {
      get canCommit() {
        return replica.canCommit;
      },
      check: () =>
        replica.probe === undefined
          ? Promise.resolve()
          : Promise.reject(replica.probe),
    } as unknown as WriteCircuit,
    shutdown,
    {
      isReady: () => replica.tokensReady,
      isCurrent: () => replica.tokensCurrent,
    } as unknown as TokenVerifier,
    {
      get isStarted() {
        return replica.started;
      },
    } as unknown as DatabaseStartup,
    { INSTANCE_ID: instanceId } as Environment,
    {
      gauge: (name: string, _help: string, read: () => number | undefined) =>
        gauges.set(name, read),
    } as unknown as MetricsService,
  );
  const gauge = (name: string) => gauges.get(name)?.();
  return { controller, replica, shutdown, gauge };
}

/** The 503 a probe throws, as status and sentence; undefined when it answers. */
async function refusal(probe: () => unknown) {
  try {
    await probe();
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    const refused = error as ApiError;
    expect(refused.headers['Retry-After']).toBe('2');
    return { status: refused.getStatus(), message: refused.message };
  }
}

const NOT_READY = {
  shuttingDown: 'The service is not ready: it is shutting down.',
  starting:
    'The service is not ready: it is starting (its database has not answered yet).',
  tokens: 'The service is not ready: its managed tokens are not loaded yet.',
};

describe('HealthController', () => {
  it('names the instance: INSTANCE_ID, or one random id per process', () => {
    expect(healthOf('replica-7').controller.live()).toEqual({
      status: 'ok',
      instance: 'replica-7',
    });
    const { controller } = healthOf();
    const { instance } = controller.live();
    expect(instance).toMatch(/^[0-9a-f-]{36}$/);
    expect(controller.ready().instance).toBe(instance);
    expect(healthOf().controller.live().instance).not.toBe(instance);
  });

  it('answers liveness whatever the replica’s state', () => {
    const { controller, replica, shutdown } = healthOf('x');
    Object.assign(replica, {
      started: false,
      tokensReady: false,
      canCommit: false,
    });
    shutdown.begin();
    expect(controller.live()).toEqual({ status: 'ok', instance: 'x' });
  });

  it('is ready once started with its tokens loaded, whether or not the database commits', async () => {
    const { controller, replica, gauge } = healthOf('x');
    replica.canCommit = false;
    expect(controller.ready()).toEqual({ status: 'ok', instance: 'x' });
    expect(gauge('service_ready')).toBe(1);
    expect(gauge('database_can_commit')).toBe(0);
  });

  it.each([
    ['shutting down', NOT_READY.shuttingDown],
    ['starting', NOT_READY.starting],
    ['without its managed tokens', NOT_READY.tokens],
  ])(
    'is not ready while %s, and says so in both probes and the gauge',
    async (state, message) => {
      const { controller, replica, shutdown, gauge } = healthOf();
      if (state === 'shutting down') shutdown.begin();
      if (state === 'starting') replica.started = false;
      if (state === 'without its managed tokens') replica.tokensReady = false;
      expect(await refusal(() => controller.ready())).toEqual({
        status: 503,
        message,
      });
      expect(await refusal(() => controller.health())).toEqual({
        status: 503,
        message,
      });
      expect(gauge('service_ready')).toBe(0);
    },
  );

  it('names shutting down first, then starting, then the tokens', async () => {
    const { controller, replica, shutdown } = healthOf();
    Object.assign(replica, { started: false, tokensReady: false });
    expect((await refusal(() => controller.ready()))?.message).toBe(
      NOT_READY.starting,
    );
    shutdown.begin();
    expect((await refusal(() => controller.ready()))?.message).toBe(
      NOT_READY.shuttingDown,
    );
  });

  it('is healthy when ready, its tokens current and a commit goes through', async () => {
    const { controller, replica, gauge } = healthOf('x');
    expect(await controller.health()).toEqual({ status: 'ok', instance: 'x' });
    expect(gauge('database_can_commit')).toBe(1);

    replica.tokensCurrent = false;
    expect(await refusal(() => controller.health())).toEqual({
      status: 503,
      message:
        'The service is not healthy: its managed tokens are out of date.',
    });
    // Readiness does not ask whether the tokens are current.
    expect(controller.ready().status).toBe('ok');
  });

  it('passes the commit probe’s failure on, for the exception filter to answer', async () => {
    const { controller, replica } = healthOf();
    const down = new Error('the database cannot commit');
    replica.probe = down;
    await expect(controller.health()).rejects.toBe(down);
    expect(controller.ready().status).toBe('ok');
  });

  it('counts the database as not committing before it has started', () => {
    const { replica, gauge } = healthOf();
    replica.started = false;
    expect(gauge('database_can_commit')).toBe(0);
  });

  it('answers another method on a probe’s path with 405 and Allow: GET, HEAD', () => {
    const { controller } = healthOf();
    expect(() => controller.rejectOtherMethods()).toThrow(
      expect.objectContaining({
        headers: { Allow: 'GET, HEAD' },
      }),
    );
  });
});
