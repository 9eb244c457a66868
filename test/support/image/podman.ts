import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, open, readFile, rm } from 'node:fs/promises';
import { get as httpGet } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { eventually } from '../poll.js';

/** The machine's podman settings the scripts use (docs/container-image.md). */
export const CONTAINERS_CONF = resolve('docker/podman/containers.conf');

export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * podman says on each container start and removal that it cannot reach systemd to time
 * health checks (no systemd runs here; they are run on demand): not the test's business.
 */
function withoutSystemdNotices(text: string): string {
  return text
    .split('\n')
    .filter((line) => !line.includes('unable to get systemd connection'))
    .join('\n');
}

/** A command run to its end with CONTAINERS_CONF set, its output kept. */
export function run(
  command: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<Finished> {
  const child = spawn(command, args, {
    env: { ...process.env, CONTAINERS_CONF, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolveRun, reject) => {
    child.once('error', reject);
    child.once('close', (code) =>
      resolveRun({ code, stdout, stderr: withoutSystemdNotices(stderr) }),
    );
  });
}

/** podman with these arguments; fails with its output unless it exits 0. */
export async function podman(...args: string[]): Promise<string> {
  const result = await run('podman', args);
  if (result.code !== 0) {
    throw new Error(
      `podman ${args.join(' ')} exited ${result.code}:\n${result.stderr}${result.stdout}`,
    );
  }
  return result.stdout.trim();
}

/** A field of `podman inspect`, by Go template. */
export function inspect(target: string, template: string): Promise<string> {
  return podman('inspect', '--format', template, target);
}

/** stdout and stderr of a container, as `podman logs` has them, in lines. */
export async function logLines(container: string): Promise<string[]> {
  const { code, stdout, stderr } = await run('podman', ['logs', container]);
  if (code !== 0) throw new Error(`podman logs ${container}: ${stderr}`);
  return `${stdout}\n${stderr}`.split('\n').filter((line) => line !== '');
}

/**
 * The PostgreSQL stand-in (docker/postgres-stand-in/), built on the base the service's image
 * build left in podman's storage: no registry here supplies Docker Hub's postgres image.
 * podman's layer cache makes every build after the first take seconds.
 */
export const POSTGRES_STAND_IN = 'localhost/plant-store-postgres-stand-in:15';

export async function buildPostgresStandIn(): Promise<string> {
  await podman(
    'build',
    '--format',
    'docker',
    '--network=host',
    '--tag',
    POSTGRES_STAND_IN,
    'docker/postgres-stand-in',
  );
  return POSTGRES_STAND_IN;
}

export interface ApiService {
  /** What DOCKER_HOST names: `unix://<socket>`. */
  dockerHost: string;
  /** Ends the service (SIGTERM, SIGKILL past a deadline) and removes its socket's folder. */
  stop(): Promise<void>;
}

const API_STOP_DEADLINE_MS = 10_000;

/** GET /_ping on the socket: true once the service answers it. */
function pings(socketPath: string): Promise<boolean> {
  return new Promise((resolvePing) => {
    const request = httpGet({ socketPath, path: '/_ping' }, (answer) => {
      answer.resume();
      resolvePing(answer.statusCode === 200);
    });
    request.once('error', () => resolvePing(false));
  });
}

/**
 * podman's Docker-compatible API (`podman system service`) on a socket of its own, with the
 * machine's settings (CONTAINERS_CONF: every container it creates needs them), resolved once
 * it answers /_ping. Its output goes to a file, not a pipe: the conmon of each container it
 * starts inherits its descriptors and would hold a pipe open.
 */
export async function startApiService(): Promise<ApiService> {
  const folder = await mkdtemp(join(tmpdir(), 'plant-store-podman-api-'));
  const socket = join(folder, 'podman.sock');
  const log = await open(join(folder, 'service.log'), 'w');
  const service = spawn(
    'podman',
    ['system', 'service', '--time=0', `unix://${socket}`],
    {
      env: { ...process.env, CONTAINERS_CONF },
      stdio: ['ignore', log.fd, log.fd],
    },
  );
  await log.close();
  let spawnError: Error | undefined;
  service.once('error', (error) => (spawnError = error));
  // A spawn that failed emits no exit: nothing to wait for then.
  const exited = once(service, 'exit').catch(() => undefined);
  const stop = async () => {
    if (service.exitCode === null && service.signalCode === null) {
      service.kill('SIGTERM');
      const timer = setTimeout(
        () => service.kill('SIGKILL'),
        API_STOP_DEADLINE_MS,
      );
      await exited;
      clearTimeout(timer);
    }
    await rm(folder, { recursive: true, force: true });
  };
  try {
    await eventually('podman system service to answer /_ping', async () => {
      if (spawnError !== undefined) throw spawnError;
      if (service.exitCode !== null)
        throw new Error(
          `podman system service exited ${service.exitCode}:\n${await readFile(join(folder, 'service.log'), 'utf8')}`,
        );
      return (await pings(socket)) || undefined;
    });
  } catch (error) {
    await stop();
    throw error;
  }
  return { dockerHost: `unix://${socket}`, stop };
}
