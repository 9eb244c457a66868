import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { chown, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from '../../../test-kit/free-port.mjs';
import { eventually } from '../poll.js';
import { Balancer, ensureHaproxy } from './haproxy.js';

/** The HAProxy configuration for Patroni that docs/ha-postgres.md describes. */
export const PATRONI_HAPROXY_CONFIG = resolve('docker/haproxy/patroni.cfg');

const POSTGRES_BIN = '/usr/lib/postgresql/15/bin';
const PASSWORD = 'plant-store-ha-test';
export const DATABASE = 'plant_store_test';

/**
 * etcd, Patroni and PostgreSQL 15 where missing, by the project's own script (CI runs on a
 * fresh machine), and HAProxy by its own.
 */
export async function ensureHaPostgres(): Promise<string> {
  await promisify(execFile)(resolve('.ci/install-ha-postgres'), [], {
    timeout: 300_000,
  }).catch((error: { stderr?: string; message: string }) => {
    throw new Error(error.stderr || error.message);
  });
  return ensureHaproxy();
}

/** PostgreSQL refuses to run as root: as root, Patroni (and so PostgreSQL) runs as `postgres`. */
async function postgresUser(): Promise<{ uid?: number; gid?: number }> {
  if (userInfo().uid !== 0) return {};
  const id = async (flag: string): Promise<number> =>
    Number((await promisify(execFile)('id', [flag, 'postgres'])).stdout);
  return { uid: await id('-u'), gid: await id('-g') };
}

/** A child process whose output is kept, killed with the test process at the latest. */
class Child {
  output = '';
  readonly exited: Promise<void>;

  constructor(readonly process: ChildProcess) {
    process.stdout?.on(
      'data',
      (chunk: Buffer) => (this.output += String(chunk)),
    );
    process.stderr?.on(
      'data',
      (chunk: Buffer) => (this.output += String(chunk)),
    );
    this.exited = new Promise((done) => process.once('exit', () => done()));
    const reap = (): void => void process.kill('SIGKILL');
    globalThis.process.once('exit', reap);
    void this.exited.then(() =>
      globalThis.process.removeListener('exit', reap),
    );
  }

  get running(): boolean {
    return this.process.exitCode === null && this.process.signalCode === null;
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    if (this.running) this.process.kill(signal);
    await this.exited;
  }
}

export interface PatroniMember {
  name: string;
  /** leader, sync_standby, replica, ... */
  role: string;
  state: string;
  timeline?: number;
  lag?: number | string;
}

/** One PostgreSQL node under its Patroni. */
export class PatroniNode {
  child: Child | undefined;

  constructor(
    readonly name: string,
    readonly postgresPort: number,
    readonly apiPort: number,
    readonly dataDir: string,
    private readonly configFile: string,
    private readonly user: { uid?: number; gid?: number },
  ) {}

  get apiUrl(): string {
    return `http://127.0.0.1:${this.apiPort}`;
  }

  /** A direct connection to this node's PostgreSQL, bypassing HAProxy. */
  url(database = DATABASE): string {
    return `postgres://postgres:${PASSWORD}@127.0.0.1:${this.postgresPort}/${database}`;
  }

  start(): void {
    this.child = new Child(
      spawn('/usr/bin/patroni', [this.configFile], {
        ...this.user,
        env: { PATH: process.env.PATH ?? '', LC_ALL: 'C.UTF-8' },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
  }

  /** The PID in postmaster.pid: PostgreSQL's own server process on this node. */
  async postmasterPid(): Promise<number> {
    const text = await readFile(join(this.dataDir, 'postmaster.pid'), 'utf8');
    return Number(text.split('\n')[0]);
  }

  get log(): string {
    return this.child?.output ?? '';
  }
}

export interface Commit {
  ok: boolean;
  /** performance.now() when it was sent, and when it was answered. */
  started: number;
  at: number;
}

/** Issue 42: creates again within 1 s of a plain client's commit, on a quiet machine. */
export const CREATES_AFTER_COMMIT_MS = 1_000;

/**
 * How long after `backAt` (the plain client's first commit again) the service may take to
 * create: issue 42's second, plus twice the slowest commit the plain client made from then
 * until `createdAt`. The service has two commits to make in that time, its probe and then
 * the create, each on a machine as loaded as the plain client found it (a replica starting
 * beside it, a standby rejoining), so the bound is measured in the same run, not guessed.
 */
export function createsAgainWithin(
  commits: readonly Commit[],
  backAt: number,
  createdAt: number,
): number {
  const slowest = Math.max(
    0,
    ...commits
      .filter(
        ({ ok, started }) => ok && started >= backAt && started <= createdAt,
      )
      .map(({ started, at }) => at - started),
  );
  return CREATES_AFTER_COMMIT_MS + 2 * slowest;
}

/**
 * A throwaway HA PostgreSQL: etcd, two PostgreSQL 15 nodes under Patroni in strict
 * synchronous mode, and HAProxy routing to the leader (docker/haproxy/patroni.cfg), each a
 * process of this test on free ports, in one temporary directory removed by stop().
 */
export class HaPostgres {
  private constructor(
    readonly dir: string,
    private readonly etcd: Child,
    readonly nodes: [PatroniNode, PatroniNode],
    readonly balancer: Balancer,
  ) {}

  /** DATABASE_URL through HAProxy: what the service is given. */
  get url(): string {
    return this.urlThroughBalancer(DATABASE);
  }

  private urlThroughBalancer(database: string): string {
    return `postgres://postgres:${PASSWORD}@127.0.0.1:${this.balancer.port}/${database}`;
  }

  static async start(haproxy: string): Promise<HaPostgres> {
    const dir = await mkdtemp(join(tmpdir(), 'plant-store-ha-'));
    const user = await postgresUser();
    if (user.uid !== undefined) await chown(dir, user.uid, user.gid!);

    const [etcdClient, etcdPeer] = [await freePort(), await freePort()];
    const etcd = new Child(
      spawn(
        '/usr/bin/etcd',
        [
          '--name=etcd',
          `--data-dir=${join(dir, 'etcd')}`,
          `--listen-client-urls=http://127.0.0.1:${etcdClient}`,
          `--advertise-client-urls=http://127.0.0.1:${etcdClient}`,
          `--listen-peer-urls=http://127.0.0.1:${etcdPeer}`,
          `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeer}`,
          `--initial-cluster=etcd=http://127.0.0.1:${etcdPeer}`,
          '--log-level=warn',
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      ),
    );
    await eventually(
      'etcd to answer',
      async () => {
        if (!etcd.running) throw new Error(`etcd exited:\n${etcd.output}`);
        const health = await fetch(`http://127.0.0.1:${etcdClient}/health`)
          .then((answer) => answer.json() as Promise<{ health?: string }>)
          .catch(() => undefined);
        return health?.health === 'true' ? true : undefined;
      },
      { everyMs: 100 },
    );

    const nodes = [] as unknown as [PatroniNode, PatroniNode];
    for (const name of ['node1', 'node2']) {
      const [postgresPort, apiPort] = [await freePort(), await freePort()];
      const configFile = join(dir, `${name}.yml`);
      await writeFile(
        configFile,
        patroniConfig({ dir, name, postgresPort, apiPort, etcdClient }),
      );
      nodes.push(
        new PatroniNode(
          name,
          postgresPort,
          apiPort,
          join(dir, name),
          configFile,
          user,
        ),
      );
    }
    // The first bootstraps the cluster; the second then copies it (pg_basebackup).
    nodes[0].start();
    await eventually('node1 to lead', () => untilRole(nodes[0], 'primary'), {
      everyMs: 200,
      timeoutMs: 90_000,
    });
    nodes[1].start();

    const balancer = await Balancer.run(haproxy, {
      file: PATRONI_HAPROXY_CONFIG,
      env: {
        NODE1_ADDRESS: `127.0.0.1:${nodes[0].postgresPort}`,
        NODE1_API_PORT: String(nodes[0].apiPort),
        NODE2_ADDRESS: `127.0.0.1:${nodes[1].postgresPort}`,
        NODE2_API_PORT: String(nodes[1].apiPort),
      },
      bindVariable: 'POSTGRES_BIND',
      statsVariable: 'STATS_BIND',
      backend: 'primary',
    });
    const cluster = new HaPostgres(dir, etcd, nodes, balancer);
    await balancer.untilServers('UP', 'node1');
    const admin = new pg.Client({
      connectionString: nodes[0].url('postgres'),
    });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE ${DATABASE}`);
      // The test's own commits (commit()), apart from the service's database.
      await admin.query('CREATE TABLE test_commits (at timestamptz NOT NULL)');
    } finally {
      await admin.end();
    }
    await cluster.untilHealthy();
    return cluster;
  }

  async members(): Promise<PatroniMember[]> {
    for (const node of this.nodes) {
      const cluster = await fetch(`${node.apiUrl}/cluster`, {
        signal: AbortSignal.timeout(1_000),
      })
        .then(
          (answer) => answer.json() as Promise<{ members: PatroniMember[] }>,
        )
        .catch(() => undefined);
      if (cluster !== undefined) return cluster.members;
    }
    return [];
  }

  /**
   * Patroni's maintenance mode on or off (`patronictl pause`/`resume`): paused, it neither
   * restarts a PostgreSQL that died nor fails over, so a killed primary leaves the cluster
   * with none until resumed.
   */
  async pause(paused: boolean): Promise<void> {
    for (const node of this.nodes) {
      const answer = await sendToPatroni(node, 'PATCH', '/config', {
        pause: paused,
      }).catch(() => undefined);
      if (answer?.ok) return;
    }
    throw new Error(`Patroni refused pause: ${paused} on every node`);
  }

  /** The node Patroni names leader, once it runs as a primary. */
  async leader(): Promise<PatroniNode | undefined> {
    const members = await this.members();
    const leader = members.find(
      ({ role, state }) => role === 'leader' && state === 'running',
    );
    return this.nodes.find(({ name }) => name === leader?.name);
  }

  /**
   * Healthy: a running leader (`otherThan` another node: after a failover) and a streaming
   * synchronous standby, HAProxy sending to the leader, and a commit through HAProxy
   * answered.
   */
  async untilHealthy({
    otherThan,
    timeoutMs = 90_000,
  }: {
    otherThan?: PatroniNode;
    timeoutMs?: number;
  } = {}): Promise<PatroniNode> {
    const leader = await eventually(
      `the cluster to have a leader${otherThan ? ` other than ${otherThan.name}` : ''} and a synchronous standby`,
      async () => {
        const members = await this.members();
        const leader = members.find(
          ({ name, role, state }) =>
            role === 'leader' &&
            state === 'running' &&
            name !== otherThan?.name,
        );
        const standby = members.find(
          ({ role, state }) =>
            role === 'sync_standby' && ['streaming', 'running'].includes(state),
        );
        return leader && standby
          ? this.nodes.find(({ name }) => name === leader.name)
          : undefined;
      },
      { everyMs: 200, timeoutMs },
    );
    await this.balancer.untilServers('UP', leader.name);
    await eventually(
      'a commit through HAProxy',
      async () => ((await this.commit(2_000)).ok ? true : undefined),
      { everyMs: 100, timeoutMs },
    );
    return leader;
  }

  /**
   * One commit through HAProxy on a fresh connection: an insert into a table of the
   * test's own (in the `postgres` database), which in strict synchronous mode returns only
   * once a standby has it.
   */
  async commit(timeoutMs: number): Promise<Commit> {
    const started = performance.now();
    const client = new pg.Client({
      connectionString: this.urlThroughBalancer('postgres'),
      connectionTimeoutMillis: timeoutMs,
      query_timeout: timeoutMs,
    });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.query('INSERT INTO test_commits VALUES (now())');
      return { ok: true, started, at: performance.now() };
    } catch {
      return { ok: false, started, at: performance.now() };
    } finally {
      void client.end().catch(() => undefined);
    }
  }

  /** Every process, then the directory. */
  async stop(): Promise<void> {
    await this.balancer.stop();
    await Promise.all(
      this.nodes.map((node) => node.child?.stop() ?? Promise.resolve()),
    );
    // Patroni stops its PostgreSQL; one it left (a node killed mid-start) goes now.
    for (const node of this.nodes) {
      const pid = await node.postmasterPid().catch(() => undefined);
      if (pid !== undefined) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
    }
    await this.etcd.stop();
    await rm(this.dir, { recursive: true, force: true });
  }

  get logs(): string {
    return this.nodes
      .map((node) => `--- ${node.name}\n${node.log.slice(-6_000)}`)
      .join('\n');
  }
}

async function untilRole(
  node: PatroniNode,
  role: 'primary' | 'replica',
): Promise<true | undefined> {
  if (node.child !== undefined && !node.child.running)
    throw new Error(`Patroni ${node.name} exited:\n${node.log}`);
  const answer = await fetch(`${node.apiUrl}/${role}`, {
    signal: AbortSignal.timeout(1_000),
  }).catch(() => undefined);
  return answer?.status === 200 ? true : undefined;
}

function patroniConfig({
  dir,
  name,
  postgresPort,
  apiPort,
  etcdClient,
}: {
  dir: string;
  name: string;
  postgresPort: number;
  apiPort: number;
  etcdClient: number;
}): string {
  // JSON is YAML: no YAML writer needed.
  return JSON.stringify({
    scope: `plant-store-${process.pid}`,
    name,
    log: { level: 'WARNING' },
    restapi: {
      listen: `127.0.0.1:${apiPort}`,
      connect_address: `127.0.0.1:${apiPort}`,
    },
    etcd3: { hosts: [`127.0.0.1:${etcdClient}`] },
    bootstrap: {
      dcs: {
        ttl: 10,
        loop_wait: 2,
        retry_timeout: 4,
        primary_start_timeout: 0,
        synchronous_mode: true,
        synchronous_mode_strict: true,
        postgresql: {
          // The old primary rejoins as a standby of the new one, rewound where it had
          // written past the point of failover.
          use_pg_rewind: true,
          parameters: { wal_log_hints: 'on', max_connections: 100 },
        },
      },
      initdb: [{ encoding: 'UTF8' }, { locale: 'C.UTF-8' }],
      pg_hba: [
        'local all all trust',
        'host replication all 127.0.0.1/32 md5',
        'host all all 127.0.0.1/32 md5',
      ],
    },
    postgresql: {
      listen: `127.0.0.1:${postgresPort}`,
      connect_address: `127.0.0.1:${postgresPort}`,
      data_dir: join(dir, name),
      bin_dir: POSTGRES_BIN,
      pgpass: join(dir, `${name}.pgpass`),
      authentication: {
        superuser: { username: 'postgres', password: PASSWORD },
        replication: { username: 'replicator', password: PASSWORD },
        rewind: { username: 'postgres', password: PASSWORD },
      },
      parameters: { unix_socket_directories: dir },
      // Without it pg_basebackup waits for a spread checkpoint: minutes on an idle node.
      basebackup: [{ checkpoint: 'fast' }],
    },
  });
}

/** Waits until `standby` has replayed everything `primary` had written when called. */
export async function untilReplayed(
  primary: PatroniNode,
  standby: PatroniNode,
): Promise<void> {
  const query = async (node: PatroniNode, sql: string): Promise<string> => {
    const client = new pg.Client({ connectionString: node.url() });
    await client.connect();
    try {
      return (await client.query<{ lsn: string }>(sql)).rows[0].lsn;
    } finally {
      await client.end();
    }
  };
  const written = await query(
    primary,
    'SELECT pg_current_wal_lsn()::text AS lsn',
  );
  await eventually(
    `${standby.name} to replay up to ${written}`,
    async () =>
      (await query(
        standby,
        `SELECT (pg_last_wal_replay_lsn() >= '${written}'::pg_lsn)::text AS lsn`,
      )) === 'true'
        ? true
        : undefined,
    { everyMs: 100, timeoutMs: 30_000 },
  );
}

/**
 * `payload` as JSON to `node`'s Patroni REST API, with a Content-Length (Patroni answers
 * 411 to a chunked body), given up after 5 s.
 */
export function sendToPatroni(
  node: PatroniNode,
  method: 'PATCH' | 'POST',
  path: string,
  payload: unknown,
): Promise<Response> {
  const body = JSON.stringify(payload);
  return fetch(`${node.apiUrl}${path}`, {
    method,
    headers: {
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
    },
    body,
    signal: AbortSignal.timeout(5_000),
  });
}
