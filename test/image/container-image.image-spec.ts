import { readFile } from 'node:fs/promises';
import { Client } from 'pg';
import { inject } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { freePort } from '../../test-kit/free-port.mjs';
import { send } from '../support/http.js';
import { newPlantJson, postPlant, uniqueId } from '../support/plants.js';
import { eventually } from '../support/poll.js';
import {
  startTestPostgres,
  type TestPostgres,
} from '../support/test-postgres.js';
import { TOKEN } from '../support/tokens.js';
import { SERVICE_V8_FLAGS } from '../../src/service/v8-flags.js';
import { inspect, logLines, podman, run } from '../support/image/podman.js';
import { report, seconds } from '../support/report.js';

// The image docker/Dockerfile builds, run for real with rootful podman (docs/container-image.md):
// what an operator relies on, checked on the running container against what
// docker/compose.yaml and docker/k8s/deployment.yaml say it does.

interface Probe {
  httpGet: { path: string; port: string | number };
}
interface K8sContainer {
  ports: { name: string; containerPort: number }[];
  env: { name: string; value?: string }[];
  startupProbe: Probe;
  readinessProbe: Probe;
  livenessProbe: Probe;
  resources: { limits: { memory: string } };
  lifecycle: { preStop: { exec: { command: string[] } } };
  securityContext: {
    runAsNonRoot: boolean;
    readOnlyRootFilesystem: boolean;
    allowPrivilegeEscalation: boolean;
    capabilities: { drop: string[] };
  };
}
interface PodSpec {
  securityContext: { runAsUser: number; runAsGroup: number };
  containers: K8sContainer[];
}
interface ComposeService {
  ports?: string[];
  environment: Record<string, string>;
  stop_grace_period: string;
}

// Built for the run by the project's global setup (support/image-setup.ts).
const IMAGE = inject('plantStoreImage');
const NAME = `plant-store-image-test-${process.pid}`;
const MiB = 1024 ** 2;
// What the build adds to the base: dist and the production dependencies (93 MB when
// written); the development dependencies alone would be several hundred more.
const OWN_LAYERS_BUDGET_MB = 150;

async function deploymentSpec(): Promise<PodSpec> {
  const documents = parseAllDocuments(
    await readFile('docker/k8s/deployment.yaml', 'utf8'),
  ).map((document) => document.toJS() as Record<string, unknown>);
  const deployment = documents.find((doc) => doc.kind === 'Deployment') as {
    spec: { template: { spec: PodSpec } };
  };
  return deployment.spec.template.spec;
}

async function composeServices(): Promise<Record<string, ComposeService>> {
  const compose = parse(await readFile('docker/compose.yaml', 'utf8'), {
    merge: true,
  }) as { services: Record<string, ComposeService> };
  return compose.services;
}

/** `20s` or `1m30s`, as compose writes a duration, in milliseconds. */
function composeDurationMs(value: string): number {
  const units: Record<string, number> = { m: 60_000, s: 1000 };
  return [...value.matchAll(/(\d+)([ms])/g)].reduce(
    (total, [, amount, unit]) => total + Number(amount) * units[unit],
    0,
  );
}

/** Kubernetes memory quantities as the Deployment writes them (`256Mi`), in bytes. */
function bytesOf(quantity: string): number {
  const match = /^(\d+)(Mi|Gi)$/.exec(quantity);
  if (match === null) throw new Error(`Unexpected quantity ${quantity}`);
  return Number(match[1]) * (match[2] === 'Gi' ? 1024 ** 3 : MiB);
}

/** A field of /proc/PID/status, e.g. `Uid` -> ['1000', '1000', '1000', '1000']. */
function statusField(status: string, field: string): string[] {
  const line = status
    .split('\n')
    .find((entry) => entry.startsWith(`${field}:`));
  if (line === undefined) throw new Error(`No ${field} in /proc status`);
  return line
    .slice(field.length + 1)
    .trim()
    .split(/\s+/);
}

/** Each line parsed as JSON; fails naming the first line that is not. */
function parseJsonLines(lines: string[]): Record<string, unknown>[] {
  return lines.map((line) => {
    try {
      return JSON.parse(line) as Record<string, unknown>;
    } catch {
      throw new Error(
        `Not a JSON line: ${line}\nAll lines:\n${lines.join('\n')}`,
      );
    }
  });
}

describe('the container image, built from docker/Dockerfile and run with podman', () => {
  let postgres: TestPostgres;
  let pod: PodSpec;
  let k8s: K8sContainer;
  let replica: ComposeService;
  let app: ComposeService;
  let containerPort: number;
  let baseUrl: string;
  let pid: number;
  const containers: string[] = [];

  beforeAll(async () => {
    pod = await deploymentSpec();
    [k8s] = pod.containers;
    const services = await composeServices();
    app = services.app;
    replica = services['replica-1'];
    containerPort = k8s.ports.find(
      (port) => port.name === 'http',
    )!.containerPort;

    postgres = await startTestPostgres('image');
    const hostPort = await freePort();
    baseUrl = `http://127.0.0.1:${hostPort}`;
    const started = Date.now();
    // The one command an end-to-end suite runs (docs/container-image.md). The drain settings
    // are compose's replicas', whose delay lets the stop test see the drain; the image's own
    // PORT and HOST stay, so that the port checked is the one the image listens on.
    const launch = await run(
      'docker/run-image.sh',
      [
        '--name',
        NAME,
        '--publish',
        `127.0.0.1:${hostPort}:${containerPort}`,
        '--env',
        `SHUTDOWN_DELAY_MS=${replica.environment.SHUTDOWN_DELAY_MS}`,
        '--env',
        `SHUTDOWN_TIMEOUT_MS=${replica.environment.SHUTDOWN_TIMEOUT_MS}`,
        '--image',
        IMAGE,
      ],
      { DATABASE_URL: postgres.url, API_TOKENS: TOKEN },
    );
    containers.push(NAME);
    if (launch.code !== 0) {
      throw new Error(
        `docker/run-image.sh exited ${launch.code}:\n${launch.stderr}`,
      );
    }
    report(
      `docker/run-image.sh: healthy after ${seconds(Date.now() - started)}`,
    );
    pid = Number(await inspect(NAME, '{{.State.Pid}}'));
  }, 2 * 60_000);

  afterAll(async () => {
    for (const container of containers)
      await run('podman', ['rm', '--force', container]);
    await postgres?.stop();
  }, 60_000);

  it("prints its size and the project's own layers, which stay within budget and hold nothing of the build's /root", async () => {
    const size = Number(await inspect(IMAGE, '{{.Size}}'));
    const history = JSON.parse(
      await podman('history', '--format', 'json', IMAGE),
    ) as {
      size: number;
      CreatedBy: string;
    }[];
    const base = JSON.parse(
      await podman(
        'history',
        '--format',
        'json',
        'docker.io/library/node:24-bookworm-slim',
      ),
    ) as unknown[];
    // Newest first: whatever is above the base's own history is the Dockerfile's.
    const own = history.slice(0, history.length - base.length);
    const ownBytes = own.reduce((total, layer) => total + layer.size, 0);
    report(
      [
        `Image ${IMAGE}: ${(size / MiB).toFixed(1)} MiB, of which the project's layers ${(ownBytes / MiB).toFixed(1)} MiB:`,
        ...own
          .filter((layer) => layer.size > 0)
          .map(
            (layer) =>
              `  ${(layer.size / MiB).toFixed(1).padStart(7)} MiB  ${layer.CreatedBy.replace(/^\/bin\/sh -c (#\(nop\) )?/, '').slice(0, 100)}`,
          ),
      ].join('\n'),
    );
    expect(own.length).toBeGreaterThan(0);
    expect(ownBytes / MiB).toBeLessThan(OWN_LAYERS_BUDGET_MB);
    // The build mounted a folder over /root with the CA bundle and an .npmrc for npm ci:
    // neither may be anywhere in the image (the base has no CA bundle of its own).
    expect(
      await podman(
        'run',
        '--rm',
        '--user',
        '0',
        '--entrypoint',
        'find',
        IMAGE,
        '/',
        '-xdev',
        '(',
        '-name',
        '.npmrc',
        '-o',
        '-name',
        'ca-certificates.crt',
        ')',
      ),
    ).toBe('');
  });

  it('answers a create with 200 and stores the row in PostgreSQL', async () => {
    const id = uniqueId();
    const answer = await postPlant(
      baseUrl,
      newPlantJson(id, 'Monstera', 'tropical'),
    );
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ name: 'Monstera', tag: 'tropical' });
    const client = new Client({ connectionString: postgres.url });
    await client.connect();
    try {
      const { rows } = await client.query(
        'SELECT id::text AS id, name, tag FROM plants WHERE id = $1::bigint',
        [id.toString()],
      );
      expect(rows).toEqual([
        { id: id.toString(), name: 'Monstera', tag: 'tropical' },
      ]);
    } finally {
      await client.end();
    }
  });

  it("runs node itself as PID 1, as the Deployment's non-root user, with the service's V8 flags", async () => {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const { runAsUser, runAsGroup } = pod.securityContext;
    expect(runAsUser).not.toBe(0);
    expect(statusField(status, 'Uid')).toEqual(
      Array(4).fill(String(runAsUser)),
    );
    expect(statusField(status, 'Gid')).toEqual(
      Array(4).fill(String(runAsGroup)),
    );
    const commandLine = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split(
      '\0',
    );
    // `node dist/service/main.js` as the image starts it, then as the service started over, in the
    // same process, with its V8 flags (src/service/v8-flags.ts); Node names the script by its path.
    expect(commandLine.slice(0, -1)).toEqual([
      'node',
      ...SERVICE_V8_FLAGS,
      '/app/dist/service/main.js',
    ]);
    // PID 1 inside: the process the container's stop signal goes to.
    expect(statusField(status, 'NSpid').at(-1)).toBe('1');
  });

  it("keeps the Deployment's lock-down: read-only root, no capabilities, no privilege escalation, its memory limit", async () => {
    const { securityContext, resources } = k8s;
    expect(securityContext).toMatchObject({
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    });
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    for (const set of ['CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb'])
      expect(statusField(status, set), set).toEqual(['0000000000000000']);
    expect(statusField(status, 'NoNewPrivs')).toEqual(['1']);

    const rootMount = (await readFile(`/proc/${pid}/mountinfo`, 'utf8'))
      .split('\n')
      .map((line) => line.split(' '))
      .find((fields) => fields[4] === '/');
    expect(rootMount?.[5].split(',')).toContain('ro');
    // The node user's own home is writable by its owner, but not on a read-only root; /tmp
    // is the scratch space the Deployment mounts.
    const write = (path: string) =>
      run('podman', [
        'exec',
        NAME,
        'node',
        '-e',
        `require('fs').writeFileSync('${path}', 'x')`,
      ]);
    const home = await write('/home/node/probe');
    expect(home.code).not.toBe(0);
    expect(home.stderr).toContain('EROFS');
    expect((await write('/tmp/probe')).code).toBe(0);

    const memoryCgroup = (await readFile(`/proc/${pid}/cgroup`, 'utf8'))
      .split('\n')
      .find((line) => line.split(':')[1] === 'memory')!
      .split(':')[2];
    const cgroupFile = (name: string) =>
      readFile(`/sys/fs/cgroup/memory${memoryCgroup}/${name}`, 'utf8');
    expect(Number(await cgroupFile('memory.limit_in_bytes'))).toBe(
      bytesOf(resources.limits.memory),
    );
    const used = Number(await cgroupFile('memory.usage_in_bytes'));
    const rss = Number(statusField(status, 'VmRSS')[0]) * 1024;
    report(
      `Memory: the container's cgroup ${(used / MiB).toFixed(0)} MiB (memory.usage_in_bytes), node's RSS ${(rss / MiB).toFixed(0)} MiB, of a ${resources.limits.memory} limit`,
    );
    expect(rss).toBeLessThan(bytesOf(resources.limits.memory));
  });

  it("answers the Deployment's probes on its container port, runs its preStop command, and the image's health check passes", async () => {
    for (const probe of [
      k8s.startupProbe,
      k8s.readinessProbe,
      k8s.livenessProbe,
    ]) {
      const { port } = probe.httpGet;
      const probePort =
        typeof port === 'number'
          ? port
          : k8s.ports.find((candidate) => candidate.name === port)
              ?.containerPort;
      expect(probePort).toBe(containerPort);
      const answer = await send(`${baseUrl}${probe.httpGet.path}`);
      expect({ path: probe.httpGet.path, status: answer.status }).toEqual({
        path: probe.httpGet.path,
        status: 200,
      });
    }
    // compose publishes the same container port.
    expect(app.ports).toContain(`${containerPort}:${containerPort}`);
    expect(await inspect(IMAGE, '{{json .Config.ExposedPorts}}')).toBe(
      JSON.stringify({ [`${containerPort}/tcp`]: {} }),
    );
    // The Deployment's preStop pause runs in this image (as the kubelet runs it: in the
    // container, as its user): it needs the command it names.
    const { command } = k8s.lifecycle.preStop.exec;
    const preStop = await run('podman', ['exec', NAME, ...command]);
    expect({ command, code: preStop.code, stderr: preStop.stderr }).toEqual({
      command,
      code: 0,
      stderr: '',
    });
    const check = await run('podman', ['healthcheck', 'run', NAME]);
    expect({ code: check.code, stderr: check.stderr }).toEqual({
      code: 0,
      stderr: '',
    });
    expect(await inspect(NAME, '{{.State.Health.Status}}')).toBe('healthy');
  });

  it("drains on podman stop (SIGTERM to node): serves through SHUTDOWN_DELAY_MS, exits 0 within compose's stop_grace_period", async () => {
    // The image names no other stop signal, so podman stop, docker stop and the kubelet send SIGTERM.
    expect(await inspect(IMAGE, '{{.Config.StopSignal}}')).toMatch(
      /^(|SIGTERM|15)$/,
    );
    const delayMs = Number(replica.environment.SHUTDOWN_DELAY_MS);
    const graceMs = composeDurationMs(replica.stop_grace_period);
    const started = Date.now();
    const stopping = run('podman', [
      'stop',
      '--time',
      String(graceMs / 1000),
      NAME,
    ]);
    await eventually(
      'the drain to begin',
      async () =>
        (await logLines(NAME)).some((line) =>
          line.includes('SIGTERM received'),
        ) || undefined,
    );
    // Still serving while load balancers catch up; readiness already says no.
    expect((await send(`${baseUrl}/health/ready`)).status).toBe(503);
    expect(
      (await postPlant(baseUrl, newPlantJson(uniqueId(), 'Late'))).status,
    ).toBe(200);
    const stopped = await stopping;
    const elapsed = Date.now() - started;
    report(
      `podman stop: exited after ${seconds(elapsed)} (delay ${seconds(delayMs)}, grace ${seconds(graceMs)})`,
    );
    expect(stopped.code).toBe(0);
    expect(await inspect(NAME, '{{.State.ExitCode}}')).toBe('0');
    expect(elapsed).toBeGreaterThanOrEqual(delayMs);
    expect(elapsed).toBeLessThan(graceMs);
  });

  it('wrote every line as JSON, and its start-up line names the address it listened on', async () => {
    const lines = parseJsonLines(await logLines(NAME));
    const messages = lines.map((line) => line.msg);
    expect(messages).toContainEqual(
      expect.stringMatching(
        new RegExp(`^Plant Store listening on 0\\.0\\.0\\.0:${containerPort} `),
      ),
    );
    expect(messages).toContainEqual(
      expect.stringContaining('SIGTERM received'),
    );
  });

  it('starts while its database is unreachable: live, not ready, every line JSON; podman stop ends it with exit 0', async () => {
    const name = `${NAME}-no-database`;
    const closedPort = await freePort();
    const hostPort = await freePort();
    const url = `http://127.0.0.1:${hostPort}`;
    containers.push(name);
    await podman(
      'run',
      '--detach',
      '--name',
      name,
      '--read-only',
      '--cap-drop=all',
      '--security-opt',
      'no-new-privileges',
      '--network',
      'slirp4netns:allow_host_loopback=true',
      '--publish',
      `127.0.0.1:${hostPort}:${containerPort}`,
      '--env',
      `DATABASE_URL=postgres://plant_store:unused@10.0.2.2:${closedPort}/plant_store_test`,
      '--env',
      `API_TOKENS=${TOKEN}`,
      '--env',
      'SHUTDOWN_DELAY_MS=0',
      IMAGE,
    );
    // A replica started during a database outage waits for it (issue 42): the kubelet's
    // liveness probe passes, its readiness probe says "starting".
    await eventually('the container to answer /health/live', () =>
      send(`${url}/health/live`).then(
        ({ status }) => (status === 200 ? true : undefined),
        () => undefined,
      ),
    );
    const ready = await send(`${url}/health/ready`);
    expect(ready.status).toBe(503);
    await eventually(
      'the warning that the database cannot be reached',
      async () =>
        (await logLines(name)).some((line) => line.includes('ECONNREFUSED')) ||
        undefined,
    );
    const stopped = await run('podman', ['stop', '--time', '10', name]);
    expect(stopped.code).toBe(0);
    expect(await inspect(name, '{{.State.ExitCode}}')).toBe('0');
    const lines = parseJsonLines(await logLines(name));
    expect(lines.map((line) => line.msg)).toContainEqual(
      expect.stringContaining('The database cannot be reached'),
    );
  });
});
