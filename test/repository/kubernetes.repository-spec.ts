import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import {
  APP_PORT,
  LIVE,
  READY,
} from '../support/repository/deployed-service.js';
import {
  isSecretName,
  looksLikeSecret,
  urlPassword,
} from '../support/repository/secrets.js';

// docker/k8s, read as the API server reads the manifests: no cluster runs here.

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
    strategy?: { rollingUpdate?: { maxUnavailable?: number | string } };
  };
  data?: Record<string, string>;
  stringData?: Record<string, string>;
  resources?: string[];
}

function manifests(file: string): Manifest[] {
  return parseAllDocuments(readFileSync(`docker/k8s/${file}`, 'utf8')).map(
    (document) => {
      expect(document.errors).toEqual([]);
      return document.toJS() as Manifest;
    },
  );
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
    // No probe asks the database (GET /health does): it is every replica's, and failing
    // with it would take every pod out of the Service at once (issue 42).
    const probes = [
      container.readinessProbe,
      container.livenessProbe,
      container.startupProbe,
    ].filter((probe) => probe !== undefined);
    for (const probe of probes)
      expect([LIVE, READY]).toContain(probe.httpGet?.path);
  });

  it('rolls out with maxUnavailable 0: a new pod is ready before an old one goes', () => {
    expect(deployment.spec?.strategy?.rollingUpdate?.maxUnavailable).toBe(0);
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
      readFileSync('docker/k8s/kustomization.yaml', 'utf8'),
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
