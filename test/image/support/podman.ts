import { spawn } from 'node:child_process';
import { resolve } from 'node:path';

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
