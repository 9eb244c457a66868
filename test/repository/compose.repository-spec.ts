import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse } from 'yaml';
import { APP_PORT } from '../support/repository/deployed-service.js';
import { DOCKERFILE_PATH } from '../support/repository/dockerfile.js';
import { looksLikeSecret } from '../support/repository/secrets.js';

// docker/compose.yaml and the HAProxy configuration its scale profile mounts, read as
// Docker Compose and HAProxy read them: no Docker engine runs here.

/** `15s`, `1m30s`, `500ms` in seconds, the way compose writes durations. */
function durationSeconds(value: string): number {
  const units: Record<string, number> = { h: 3600, m: 60, s: 1, ms: 0.001 };
  const parts = [...value.matchAll(/(\d+(?:\.\d+)?)(ms|h|m|s)/g)];
  expect(parts.map(([part]) => part).join(''), `duration ${value}`).toBe(value);
  return parts.reduce(
    (total, [, amount, unit]) => total + Number(amount) * units[unit],
    0,
  );
}

type EnvironmentMap = Record<string, string>;

interface ComposeService {
  image?: string;
  profiles?: string[];
  ports?: string[];
  build?: { context: string; dockerfile?: string };
  environment?: EnvironmentMap | string[];
  depends_on?: Record<string, { condition?: string }> | string[];
  healthcheck?: { test: string[] | string };
  stop_grace_period?: string;
  volumes?: string[];
}

function composeEnvironment(service: ComposeService): EnvironmentMap {
  const environment = service.environment ?? {};
  if (!Array.isArray(environment)) return environment;
  return Object.fromEntries(
    environment.map((entry) => {
      const equals = entry.indexOf('=');
      return [entry.slice(0, equals), entry.slice(equals + 1)];
    }),
  );
}

/** `${NAME}` or `${NAME:?message}`: from the caller's environment, no default value. */
function fromCallerEnvironment(value: string, name: string): boolean {
  return new RegExp(`^\\$\\{${name}(:?\\?[^}]*)?\\}$`).test(value);
}

describe('docker/compose.yaml', () => {
  const compose = parse(readFileSync('docker/compose.yaml', 'utf8')) as {
    services: Record<string, ComposeService>;
  };
  const { app, postgres } = compose.services;
  const appEnv = composeEnvironment(app);
  const postgresEnv = composeEnvironment(postgres);

  it('builds the app from the repository root with docker/Dockerfile', () => {
    expect(app.build).toBeDefined();
    const context = resolve('docker', app.build?.context ?? '');
    expect(context).toBe(resolve('.'));
    expect(resolve(context, app.build?.dockerfile ?? 'Dockerfile')).toBe(
      DOCKERFILE_PATH,
    );
  });

  it('starts the app only once PostgreSQL reports healthy', () => {
    expect(postgres.image).toMatch(/^postgres:\d+/);
    const test = postgres.healthcheck?.test;
    expect(Array.isArray(test) ? test.join(' ') : test).toMatch(/pg_isready/);
    expect(Array.isArray(app.depends_on)).toBe(false);
    expect(
      (app.depends_on as Record<string, { condition?: string }>).postgres
        ?.condition,
    ).toBe('service_healthy');
    expect(postgres.volumes?.length).toBeGreaterThan(0);
  });

  it('takes API_TOKENS and the database password from the environment, never a literal', () => {
    expect(fromCallerEnvironment(appEnv.API_TOKENS ?? '', 'API_TOKENS')).toBe(
      true,
    );
    expect(
      fromCallerEnvironment(
        postgresEnv.POSTGRES_PASSWORD ?? '',
        'POSTGRES_PASSWORD',
      ),
    ).toBe(true);
    const url =
      /^postgres(?:ql)?:\/\/([^:@/]+):(.+)@([^:/@]+)(?::\d+)?\/([^/?]+)$/.exec(
        appEnv.DATABASE_URL ?? '',
      );
    expect(url, `DATABASE_URL ${appEnv.DATABASE_URL}`).not.toBeNull();
    const [, user, password, host, database] = url ?? [];
    expect(fromCallerEnvironment(password, 'POSTGRES_PASSWORD')).toBe(true);
    expect(host).toBe('postgres');
    expect(user).toBe(postgresEnv.POSTGRES_USER);
    expect(database).toBe(postgresEnv.POSTGRES_DB);
    for (const [name, value] of Object.entries({ ...appEnv, ...postgresEnv }))
      expect(looksLikeSecret(value), `${name}=${value}`).toBe(false);
  });

  it('waits longer than the drain delay plus the shutdown timeout before docker stop kills the app', () => {
    const shutdownMs = Number(appEnv.SHUTDOWN_TIMEOUT_MS);
    expect(shutdownMs).toBeGreaterThan(0);
    // Unset, the delay takes its default (5 s): the grace must cover it.
    const delayMs = Number(appEnv.SHUTDOWN_DELAY_MS ?? 5000);
    expect(delayMs).toBeGreaterThanOrEqual(0);
    expect(durationSeconds(app.stop_grace_period ?? '10s')).toBeGreaterThan(
      (delayMs + shutdownMs) / 1000,
    );
  });
});

/** HAProxy's `inter` x `fall` in ms: how long before it stops sending to a failing replica. */
function haproxyNoticeMs(config: string): number {
  const line = /^\s*default-server\b.*$/m.exec(config)?.[0] ?? '';
  const inter = /\binter\s+(\d+)(ms|s)\b/.exec(line);
  const fall = /\bfall\s+(\d+)\b/.exec(line);
  expect(inter, `inter in ${line}`).not.toBeNull();
  expect(fall, `fall in ${line}`).not.toBeNull();
  return (
    Number(inter?.[1]) * (inter?.[2] === 's' ? 1000 : 1) * Number(fall?.[1])
  );
}

describe("docker/compose.yaml's scale profile: replicas behind HAProxy", () => {
  const compose = parse(readFileSync('docker/compose.yaml', 'utf8')) as {
    services: Record<string, ComposeService & { volumes?: string[] }>;
  };
  const { app, balancer, ...rest } = compose.services;
  const replicas = Object.entries(rest).filter(([name]) =>
    name.startsWith('replica'),
  );
  const config = readFileSync('docker/haproxy/haproxy.cfg', 'utf8');

  it('runs two replicas and the balancer only with --profile scale, the app as before without it', () => {
    expect(replicas.map(([name]) => name)).toEqual(['replica-1', 'replica-2']);
    for (const [, replica] of replicas)
      expect(replica.profiles).toEqual(['scale']);
    expect(balancer.profiles).toEqual(['scale']);
    expect(app.profiles).toBeUndefined();
    // The balancer publishes a port of its own, so both can run at once.
    const published = (service: ComposeService) =>
      (service.ports ?? []).map((port) => port.split(':')[0]);
    for (const port of published(balancer))
      expect(published(app)).not.toContain(port);
  });

  it('builds each replica like the app, health-gated, with secrets from the caller only', () => {
    expect(replicas.length).toBeGreaterThanOrEqual(2);
    for (const [name, replica] of replicas) {
      expect(replica.build, name).toEqual(app.build);
      expect(
        (replica.depends_on as Record<string, { condition?: string }>).postgres
          ?.condition,
      ).toBe('service_healthy');
      const env = composeEnvironment(replica);
      expect(env.DATABASE_URL).toBe(composeEnvironment(app).DATABASE_URL);
      expect(fromCallerEnvironment(env.API_TOKENS ?? '', 'API_TOKENS')).toBe(
        true,
      );
      for (const [key, value] of Object.entries(env))
        expect(looksLikeSecret(value), `${key}=${value}`).toBe(false);
    }
  });

  it("keeps each replica serving until HAProxy's checks notice, and docker stop waits for the drain", () => {
    const noticeMs = haproxyNoticeMs(config);
    expect(replicas.length).toBeGreaterThanOrEqual(2);
    for (const [name, replica] of replicas) {
      const env = composeEnvironment(replica);
      const delayMs = Number(env.SHUTDOWN_DELAY_MS ?? 5000);
      const timeoutMs = Number(env.SHUTDOWN_TIMEOUT_MS ?? 10000);
      // Twice the notice time: checks run late on a busy host.
      expect(delayMs, name).toBeGreaterThanOrEqual(2 * noticeMs);
      expect(
        durationSeconds(replica.stop_grace_period ?? '10s'),
      ).toBeGreaterThan((delayMs + timeoutMs) / 1000);
    }
    expect(config).toMatch(/option httpchk GET \/health\/ready/);
    expect(config).toMatch(/http-check expect status 200/);
  });

  it('mounts the one HAProxy configuration the reliability suite tests, and fills in every address it reads', () => {
    const mount = (balancer.volumes ?? [])
      .map((volume) => volume.split(':'))
      .find(([, target]) => target === '/usr/local/etc/haproxy/haproxy.cfg');
    expect(mount).toBeDefined();
    expect(resolve('docker', mount?.[0] ?? '')).toBe(
      resolve('docker/haproxy/haproxy.cfg'),
    );
    // `.if defined(...)` needs HAProxy 2.4 or later; the suite runs Debian's 2.6.
    const version = /^haproxy:(\d+)\.(\d+)/.exec(balancer.image ?? '');
    expect(
      Number(version?.[1]) * 100 + Number(version?.[2]),
    ).toBeGreaterThanOrEqual(204);
    const env = composeEnvironment(balancer);
    const wanted = [...config.matchAll(/"\$\{(\w+)\}"/g)].map(
      ([, name]) => name,
    );
    expect(wanted.length).toBeGreaterThan(0);
    for (const name of wanted) expect(env[name], name).toBeDefined();
    // Each server line points at a replica service on the service's port.
    for (const name of wanted.filter((key) => key.startsWith('REPLICA'))) {
      const [host, port] = env[name].split(':');
      expect(Object.keys(compose.services)).toContain(host);
      expect(Number(port)).toBe(APP_PORT);
    }
  });
});
