// Starting and stopping the servers measured: the built service and the reference servers,
// each a child process on a free port of the loopback interface.
import { execFileSync } from 'node:child_process';
import {
  closeSync,
  mkdirSync,
  openSync,
  readFileSync,
  readlinkSync,
  rmSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { freePort } from '../../test-kit/free-port.mjs';
import {
  productionNodeFlags,
  startNodeProcess,
} from '../../test-kit/node-process.mjs';
import { ROOT, SERVICE_MAIN } from './paths.mjs';

/**
 * The Node arguments of the built service as `npm run start:prod` runs it (the tests start
 * it with the same flags), then `flags`; `main` for another build.
 */
export function serviceArgs(flags = [], main = SERVICE_MAIN) {
  return [...productionNodeFlags(ROOT), ...flags, main];
}

/**
 * Node flags that undo the V8 flags the service adds to its own command line when they are
 * missing (src/service/v8-flags.ts): `--maglev` for `--no-maglev`, 0 (V8's "not set") for a size, so
 * that it runs on V8's defaults, to measure what the flags buy. Read from the build `main`
 * belongs to; none for a build from before the service added them.
 */
export async function withoutServiceV8Flags(main = SERVICE_MAIN) {
  const module = pathToFileURL(join(dirname(main), 'v8-flags.js')).href;
  const { SERVICE_V8_FLAGS = [] } = await import(module).catch(() => ({}));
  return SERVICE_V8_FLAGS.map((flag) =>
    flag.startsWith('--no-')
      ? `--${flag.slice('--no-'.length)}`
      : `${flag.split('=')[0]}=0`,
  );
}

/**
 * The environment a server gets to run as production runs it: production mode, JSON logs,
 * listening on `port` on the loopback interface; `extra` adds to it or overrides it, and
 * a variable set to undefined there is left out.
 */
/**
 * The settings every benchmarked server gets: the run's database and token, and no drain
 * delay (a stop between turns need not wait for a load balancer), then its own `extra`.
 */
export function benchmarkSettings(databaseUrl, token, extra = {}) {
  return {
    DATABASE_URL: databaseUrl,
    API_TOKENS: token,
    SHUTDOWN_DELAY_MS: '0',
    ...extra,
  };
}

export function serverEnv(port, extra = {}) {
  const env = {
    ...process.env,
    NODE_ENV: 'production',
    LOG_FORMAT: 'json',
    HOST: '127.0.0.1',
    PORT: String(port),
    ...extra,
  };
  for (const [name, value] of Object.entries(env))
    if (value === undefined) delete env[name];
  return env;
}

/**
 * Starts `node <args>` on a free port with serverEnv(port, env), and resolves once
 * GET <url>/health answers 200, with the time from spawn to that answer. With a log file,
 * stdout (the request log) goes there; the output kept here (the last lines) explains a
 * failure.
 */
export async function startServer({
  name,
  args,
  env = {},
  timeoutMs = 60_000,
  logFile,
}) {
  const port = await freePort();
  const spawnedAt = process.hrtime.bigint();
  if (logFile !== undefined) mkdirSync(dirname(logFile), { recursive: true });
  const stdout = logFile === undefined ? 'pipe' : openSync(logFile, 'a');
  const output = [];
  const keep = (text) => {
    output.push(...text.split('\n').filter(Boolean));
    if (output.length > 60) output.splice(0, output.length - 60);
  };
  const { child, exited } = startNodeProcess({
    args,
    env: serverEnv(port, env),
    stdout,
    onOutput: keep,
  });
  if (typeof stdout === 'number') closeSync(stdout);
  let exit;
  exited.then((value) => (exit = value));

  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (exit !== undefined)
      throw new Error(
        `${name} exited (${exit.code ?? exit.signal}) before it was ready:\n  ${output.join('\n  ')}`,
      );
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(
        `${name} was not ready within ${timeoutMs} ms:\n  ${output.join('\n  ')}`,
      );
    }
    const status = await fetch(`${url}/health`).then(
      (res) => res.status,
      () => 0,
    );
    if (status === 200) break;
    await sleep(10);
  }
  const readyMs = Number(process.hrtime.bigint() - spawnedAt) / 1e6;
  return {
    name,
    url,
    port,
    pid: child.pid,
    readyMs,
    output,
    /** SIGTERM, then wait for the exit (SIGKILL after a grace period). */
    async stop(graceMs = 15_000) {
      if (exit !== undefined) return exit;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const result = await exited;
      clearTimeout(timer);
      return result;
    },
  };
}

/**
 * The runtime a server process really runs on ("Node.js v24.21.0"), asked of the executable
 * it was started from (/proc/<pid>/exe), not assumed from this process's own.
 */
export function runtimeOf(pid) {
  try {
    const executable = readlinkSync(`/proc/${pid}/exe`);
    const version = execFileSync(executable, ['--version'], {
      encoding: 'utf8',
    }).trim();
    return `Node.js ${version}`;
  } catch {
    return 'unknown runtime';
  }
}

/**
 * Signals a server's preload (SIGUSR2: bench/preload/) and resolves to the JSON it writes to
 * `file` in answer. The file is removed first, so that an earlier report is never taken for
 * this one; a report not written within `timeoutMs` rejects.
 */
export async function preloadReport(pid, file, { timeoutMs = 10_000 } = {}) {
  rmSync(file, { force: true });
  process.kill(pid, 'SIGUSR2');
  for (let waited = 0; ; waited += 50) {
    try {
      return JSON.parse(readFileSync(file, 'utf8'));
    } catch (error) {
      if (waited > timeoutMs) throw error;
      await sleep(50);
    }
  }
}
