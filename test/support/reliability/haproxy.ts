import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../../test-kit/free-port.mjs';
import { eventually } from '../poll.js';

/** The one HAProxy configuration: docker/compose.yaml's scale profile uses it too. */
export const HAPROXY_CONFIG = resolve('docker/haproxy/haproxy.cfg');

/**
 * HAProxy where it is missing, by the project's own script (CI runs on a fresh machine):
 * apt-get as root on Debian, else a message saying how to install it.
 */
export async function ensureHaproxy(): Promise<string> {
  await promisify(execFile)(resolve('.ci/install-haproxy'), [], {
    timeout: 300_000,
  }).catch((error: { stderr?: string; message: string }) => {
    throw new Error(error.stderr || error.message);
  });
  return existsSync('/usr/sbin/haproxy') ? '/usr/sbin/haproxy' : 'haproxy';
}

/** HAProxy with one of the project's configurations, its addresses from the environment. */
export interface BalancerConfiguration {
  /** The configuration file. */
  file: string;
  /** Its variables, the listening and stats addresses aside. */
  env: Record<string, string>;
  /** The variable naming where clients connect, and the one naming the stats page. */
  bindVariable: string;
  statsVariable: string;
  /** The backend whose servers states() reports. */
  backend: string;
}

/** HAProxy as a process in front of two servers (replicas, or database nodes). */
export class Balancer {
  private output = '';
  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
    readonly port: number,
    private readonly statsUrl: string,
    private readonly backend: string,
  ) {
    child.stdout?.on('data', (chunk: Buffer) => (this.output += String(chunk)));
    child.stderr?.on('data', (chunk: Buffer) => (this.output += String(chunk)));
  }

  /** `plain`: HAProxy's plain configuration, without the documented retries. */
  static async start(
    binary: string,
    replicaPorts: [number, number],
    { plain }: { plain: boolean },
  ): Promise<Balancer> {
    const balancer = await Balancer.run(binary, {
      file: HAPROXY_CONFIG,
      env: {
        REPLICA1_ADDRESS: `127.0.0.1:${replicaPorts[0]}`,
        REPLICA2_ADDRESS: `127.0.0.1:${replicaPorts[1]}`,
        ...(plain ? { PLAIN_BALANCER: '1' } : {}),
      },
      bindVariable: 'BALANCER_BIND',
      statsVariable: 'STATS_BIND',
      backend: 'replicas',
    });
    await balancer.untilServers('UP');
    return balancer;
  }

  /** HAProxy with `configuration`, on free ports; answering its stats page once resolved. */
  static async run(
    binary: string,
    { file, env, bindVariable, statsVariable, backend }: BalancerConfiguration,
  ): Promise<Balancer> {
    const [port, statsPort] = [await freePort(), await freePort()];
    const child = spawn(binary, ['-db', '-f', file], {
      env: {
        PATH: process.env.PATH ?? '',
        [bindVariable]: `127.0.0.1:${port}`,
        [statsVariable]: `127.0.0.1:${statsPort}`,
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const reap = (): void => void child.kill('SIGKILL');
    process.once('exit', reap);
    child.once('exit', () => process.removeListener('exit', reap));
    const balancer = new Balancer(
      child,
      `http://127.0.0.1:${port}`,
      port,
      `http://127.0.0.1:${statsPort}/stats;csv`,
      backend,
    );
    await eventually(
      'HAProxy to answer on its stats page',
      async () => {
        if (child.exitCode !== null)
          throw new Error(`HAProxy exited:\n${balancer.output}`);
        return balancer.states().catch(() => undefined);
      },
      { everyMs: 50, timeoutMs: 30_000 },
    );
    return balancer;
  }

  /** Each server's state as HAProxy's health checks see it. */
  async states(): Promise<Record<string, string>> {
    const csv = await (await fetch(this.statsUrl)).text();
    const header = csv.split('\n')[0].replace(/^# /, '').split(',');
    const [name, proxy, status] = ['svname', 'pxname', 'status'].map((field) =>
      header.indexOf(field),
    );
    return Object.fromEntries(
      csv
        .split('\n')
        .slice(1)
        .map((line) => line.split(','))
        .filter(
          (row) =>
            row[proxy] === this.backend &&
            !['FRONTEND', 'BACKEND'].includes(row[name]),
        )
        .map((row) => [row[name], row[status]]),
    );
  }

  /** Waits until every server is in `state` (all servers, or the one named). */
  async untilServers(state: string, server?: string): Promise<void> {
    await eventually(
      `HAProxy to see ${server ?? 'every server'} ${state}`,
      async () => {
        if (this.child.exitCode !== null)
          throw new Error(`HAProxy exited:\n${this.output}`);
        const states = await this.states().catch(() => undefined);
        if (states === undefined) return undefined;
        const wanted =
          server === undefined ? Object.values(states) : [states[server]];
        return wanted.length > 0 && wanted.every((value) => value === state)
          ? true
          : undefined;
      },
      { everyMs: 100, timeoutMs: 60_000 },
    );
  }

  get log(): string {
    return this.output;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGTERM');
    await exited;
  }
}
