import type { ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { resolve } from 'node:path';
import { freePort } from '../../test-kit/free-port.mjs';
import {
  type NodeProcessOptions,
  productionNodeFlags,
  startNodeProcess,
} from '../../test-kit/node-process.mjs';
import { adapterUnderTest } from './adapter-under-test.js';
import { eventually } from './poll.js';
import { TEST_TOKENS } from './tokens.js';

/**
 * The built service (`npm run build`) as its own process, the way start:prod runs it: with
 * production's Node flags (V8's heap sizing and compilers), which decide its memory and
 * its pauses under load.
 */
export class ServiceProcess {
  private output = '';
  private readonly child: ChildProcess;
  private readonly exited: Promise<number | null>;

  private constructor(options: Omit<NodeProcessOptions, 'onOutput'>) {
    const { child, exited } = startNodeProcess({
      ...options,
      onOutput: (text) => (this.output += text),
    });
    this.child = child;
    this.exited = exited.then(({ code }) => code);
  }

  /**
   * `dir`: the directory holding dist/ and node_modules/, by default this repository.
   * `ownProcessGroup`: the service leads a process group, as a command started from a
   * terminal does, so that `signalGroup` can do what Ctrl+C does.
   */
  static start(
    env: Record<string, string>,
    {
      dir = resolve('.'),
      ownProcessGroup = false,
    }: { dir?: string; ownProcessGroup?: boolean } = {},
  ): ServiceProcess {
    return new ServiceProcess({
      args: [...productionNodeFlags(dir), resolve(dir, 'dist/service/main.js')],
      cwd: dir,
      detached: ownProcessGroup,
      // Only what the test gives, plus PATH: nothing leaks in from the test runner's env.
      // No balancer watches a test's service: a short drain delay, unless a test sets one.
      env: {
        PATH: process.env.PATH ?? '',
        NO_COLOR: '1',
        SHUTDOWN_DELAY_MS: '100',
        // The adapter of the e2e project this runs in (vitest-projects.ts).
        ...adapterUnderTest(),
        ...env,
      },
    });
  }

  get isRunning(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** The service's own process (node running dist/service/main.js), for reading /proc. */
  get pid(): number | undefined {
    return this.child.pid;
  }

  get text(): string {
    return this.output;
  }

  /** Waits until the output matches, or fails with what was printed so far. */
  async waitFor(
    pattern: RegExp,
    timeoutMs = 60_000,
  ): Promise<RegExpMatchArray> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const match = this.output.match(pattern);
      if (match) return match;
      if (this.child.exitCode !== null || Date.now() > deadline) {
        throw new Error(`Never printed ${pattern}. Output:\n${this.output}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  exitCode(): Promise<number | null> {
    return this.exited;
  }

  signal(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }

  /** The signal to every process of the service's group: a terminal's Ctrl+C is SIGINT. */
  signalGroup(signal: NodeJS.Signals): void {
    if (this.child.pid !== undefined) process.kill(-this.child.pid, signal);
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    if (this.child.exitCode === null) this.child.kill(signal);
    return this.exited;
  }
}

/** A service that `spawnService` started, and where it answers. */
export interface ListeningService {
  service: ServiceProcess;
  port: number;
  url: string;
}

/**
 * The built service on `databaseUrl` with the test tokens, JSON logs and `settings` on top,
 * on `port` (a free one unless given) of 127.0.0.1, as soon as it is spawned.
 */
export async function spawnService(
  databaseUrl: string,
  settings: Record<string, string> = {},
  port?: number,
): Promise<ListeningService> {
  const chosen = port ?? (await freePort());
  const service = ServiceProcess.start({
    DATABASE_URL: databaseUrl,
    API_TOKENS: TEST_TOKENS.join(','),
    PORT: String(chosen),
    HOST: '127.0.0.1',
    LOG_FORMAT: 'json',
    ...settings,
  });
  return { service, port: chosen, url: `http://127.0.0.1:${chosen}` };
}

/**
 * `spawnService`'s service once it accepts connections (whatever its LOG_LEVEL lets it
 * print; no request, so nothing is logged or traced). It listens before its database is
 * migrated and connected: `startReady` waits for that too.
 */
export async function startListening(
  ...args: Parameters<typeof spawnService>
): Promise<ListeningService> {
  const running = await spawnService(...args);
  await whileRunning(
    running.service,
    `it to accept connections at ${running.url}`,
    () => accepts(running.port),
  );
  return running;
}

/** `startListening`'s service once it is ready: its database migrated and connected. */
export async function startReady(
  ...args: Parameters<typeof startListening>
): Promise<ListeningService> {
  const running = await startListening(...args);
  await untilReady(running.service, running.url);
  return running;
}

/** Until `GET /health/ready` answers 200 (one request every 100 ms). */
export async function untilReady(
  service: ServiceProcess,
  url: string,
  timeoutMs = 60_000,
): Promise<void> {
  await whileRunning(
    service,
    `${url}/health/ready to answer 200`,
    () =>
      fetch(`${url}/health/ready`).then(
        (response) => response.status === 200,
        () => false,
      ),
    timeoutMs,
  );
}

/**
 * Polls `probe` every 100 ms until it is true; fails with what the service printed if it
 * exits meanwhile or `timeoutMs` passes.
 */
async function whileRunning(
  service: ServiceProcess,
  what: string,
  probe: () => Promise<boolean>,
  timeoutMs = 60_000,
): Promise<void> {
  try {
    await eventually(
      what,
      async () => {
        if (!service.isRunning)
          throw new Error('The service exited while starting');
        return (await probe()) ? true : undefined;
      },
      { timeoutMs, everyMs: 100 },
    );
  } catch (error) {
    throw new Error(`${(error as Error).message}:\n${service.text}`);
  }
}

/** Whether 127.0.0.1:`port` accepts a TCP connection (closed at once, with no request). */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
