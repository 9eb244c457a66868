import { captureNestLogs } from '../../test/support/nest-logs.js';
import { runClusterPrimary } from './cluster.js';
import { ConfigurationError, type Environment } from './config/environment.js';
import {
  handleStopSignals,
  type StopHandlers,
} from './lifecycle/stop-signals.js';

/** A worker as the primary sees it: an id and a process it can signal. */
interface FakeWorker {
  id: number;
  process: { pid: number; kill: ReturnType<typeof vi.fn> };
}

/** node:cluster's primary side: fork() adds a worker, 'exit' is emitted by the test. */
const fakeCluster = await vi.hoisted(async () => {
  const { EventEmitter: Emitter } = await import('node:events');
  const emitter = new Emitter();
  return Object.assign(emitter, {
    workers: {} as Record<string, unknown>,
    fork: vi.fn(),
  });
});

vi.mock('node:cluster', () => ({ default: fakeCluster }));
vi.mock('./lifecycle/stop-signals.js', () => ({ handleStopSignals: vi.fn() }));

const env = (settings: Partial<Environment>) =>
  ({
    DATABASE_URL: 'postgres://plants@db/plant_store',
    WEB_CONCURRENCY: 3,
    ...settings,
  }) as Environment;

let nextId = 1;
let exit: ReturnType<typeof vi.spyOn>;
let logs: ReturnType<typeof captureNestLogs>;
const errors = () =>
  logs.logged.filter(([level]) => level === 'error').map(([, line]) => line);

function fork(): FakeWorker {
  const worker: FakeWorker = {
    id: nextId,
    process: { pid: 1000 + nextId, kill: vi.fn() },
  };
  nextId += 1;
  (fakeCluster.workers as Record<string, FakeWorker>)[worker.id] = worker;
  return worker;
}

const workers = () =>
  Object.values(fakeCluster.workers as Record<string, FakeWorker>);

/** A worker's end as node:cluster reports it: gone from `workers`, then 'exit'. */
function ends(worker: FakeWorker, code: number, signal?: NodeJS.Signals) {
  delete (fakeCluster.workers as Record<string, FakeWorker>)[worker.id];
  fakeCluster.emit('exit', worker, code, signal);
}

/** The stop handlers the primary gave handleStopSignals. */
const stopHandlers = (): StopHandlers =>
  vi.mocked(handleStopSignals).mock.calls[0][0];

beforeEach(() => {
  fakeCluster.removeAllListeners();
  fakeCluster.workers = {};
  fakeCluster.fork.mockReset().mockImplementation(fork);
  vi.mocked(handleStopSignals).mockReset();
  nextId = 1;
  exit = vi.spyOn(process, 'exit').mockImplementation((() => {}) as never);
  logs = captureNestLogs(['log', 'error']);
});
afterEach(() => vi.restoreAllMocks());

describe('runClusterPrimary', () => {
  it('refuses to start without DATABASE_URL, naming it, and forks nothing', () => {
    expect(() => runClusterPrimary(env({ DATABASE_URL: undefined }))).toThrow(
      ConfigurationError,
    );
    expect(() => runClusterPrimary(env({ DATABASE_URL: undefined }))).toThrow(
      'Invalid configuration: WEB_CONCURRENCY above 1 needs DATABASE_URL: the embedded ' +
        'database and its development token belong to one process.',
    );
    expect(fakeCluster.fork).not.toHaveBeenCalled();
    expect(handleStopSignals).not.toHaveBeenCalled();
  });

  it('forks WEB_CONCURRENCY workers, and says so as the cluster', () => {
    runClusterPrimary(env({ WEB_CONCURRENCY: 3 }));
    expect(fakeCluster.fork).toHaveBeenCalledTimes(3);
    expect(workers()).toHaveLength(3);
    expect(logs.logged).toEqual([['log', 'Starting 3 workers']]);
    expect([...logs.contexts]).toEqual(['Cluster']);
  });

  it('replaces a worker that dies while serving, and says which and why', () => {
    runClusterPrimary(env({ WEB_CONCURRENCY: 2 }));
    const [first] = workers();
    ends(first, 1);
    expect(fakeCluster.fork).toHaveBeenCalledTimes(3);
    expect(workers()).toHaveLength(2);
    expect(errors()).toEqual([
      `Worker ${first.process.pid} died (exit code 1); starting another`,
    ]);
    const [second] = workers();
    ends(second, 0, 'SIGKILL');
    expect(errors().at(-1)).toBe(
      `Worker ${second.process.pid} died (SIGKILL); starting another`,
    );
    expect(fakeCluster.fork).toHaveBeenCalledTimes(4);
    expect(exit).not.toHaveBeenCalled();
  });

  it('on a stop signal, sends each worker SIGTERM and exits 0 once the last has exited 0', () => {
    runClusterPrimary(env({ WEB_CONCURRENCY: 2 }));
    const [first, second] = workers();
    stopHandlers().stop('SIGTERM');
    expect(logs.logged.at(-1)).toEqual([
      'log',
      'SIGTERM received: stopping 2 workers',
    ]);
    for (const worker of [first, second])
      expect(worker.process.kill).toHaveBeenCalledWith('SIGTERM');
    ends(first, 0);
    expect(exit).not.toHaveBeenCalled();
    expect(fakeCluster.fork).toHaveBeenCalledTimes(2);
    ends(second, 0);
    expect(exit).toHaveBeenCalledWith(0);
  });

  it('exits 1 when any worker failed its drain', () => {
    runClusterPrimary(env({ WEB_CONCURRENCY: 2 }));
    const [first, second] = workers();
    stopHandlers().stop('SIGINT');
    ends(first, 1);
    ends(second, 0);
    expect(exit).toHaveBeenCalledExactlyOnceWith(1);
    expect(errors()).toEqual([]);
  });

  it('hurries each worker with SIGINT on a second Ctrl+C', () => {
    runClusterPrimary(env({ WEB_CONCURRENCY: 2 }));
    stopHandlers().stop('SIGINT');
    stopHandlers().hurry();
    for (const worker of workers())
      expect(worker.process.kill.mock.calls).toEqual([['SIGTERM'], ['SIGINT']]);
  });
});
