// One store's PostgreSQL keeper, a detached process: when its stdin ends (the runner gone,
// even by SIGKILL) it stops the database and removes the folder once the service has gone.
import { chmod, rm, writeFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { PostgresProcess } from '../database/postgres-process.js';
import { recordPostmasterOwner } from '../database/stale-postmaster.js';
import { isAlive, pidOf } from '../database/pid-files.js';
import { processTree, signalEach } from './process-tree.js';
import { SERVING } from './database-keeper-process.js';
import { claimSpare, SpareCopy } from './spare-clusters.js';
import { clusterOf, KEEPER_PID_FILE, postmasterPid } from './store-folder.js';
import { CLUSTER_FOLDER, PASSWORD_FILE } from './template-cluster.js';
import { copyTree } from './tree-copy.js';

/** What startPlantStore hands the keeper, as its one argument (JSON). */
export interface KeeperOrders {
  template: string;
  dataDir: string;
  port: number;
}

/** A service draining its requests (SHUTDOWN_TIMEOUT_MS, 5 s for a test) and a margin. */
const SERVICE_EXIT_DEADLINE_MS = 15_000;
/** A spare's copy takes about a second; one still unfinished past this is given up. */
const SPARE_DEADLINE_MS = 10_000;

const orders = JSON.parse(process.argv[2] ?? '{}') as KeeperOrders;
const say = (message: object): void =>
  void process.stdout.write(`${JSON.stringify(message)}\n`);
// A runner gone (its end of the pipe closed) is what the keeper cleans up after, not a crash.
process.stdout.on('error', () => {});
let postgres: PostgresProcess | undefined;
let service: number | undefined;
let cleaning: Promise<void> | undefined;
let starting: Promise<void> | undefined;
let spare: Promise<SpareCopy | undefined> | undefined;
let received = '';

async function serviceGone(): Promise<void> {
  const deadline = Date.now() + SERVICE_EXIT_DEADLINE_MS;
  while (service !== undefined && isAlive(service)) {
    if (Date.now() > deadline) process.kill(service, 'SIGKILL');
    await sleep(50);
  }
}

/**
 * Database last, as the service stops its own: a paused one is continued first. The next
 * start's spare is finished before it exits, so that nothing writes once stop() resolved.
 */
async function cleanUp(): Promise<void> {
  // A copy still being written would outlive the folder's removal.
  await starting;
  const postmaster = await postmasterPid(orders.dataDir);
  if (postmaster !== undefined) signalEach(processTree(postmaster), 'SIGCONT');
  await serviceGone();
  // The folder goes next: a checkpoint would only write what is deleted.
  await postgres?.discard();
  await rm(orders.dataDir, { recursive: true, force: true });
  await (await spare)?.finish(SPARE_DEADLINE_MS);
  process.exit(0);
}

const stop = (): void => void (cleaning ??= cleanUp());
process.stdin.setEncoding('utf8');
process.stdin.on('data', (text: string) => {
  const lines = (received + text).split('\n');
  received = lines.pop() ?? '';
  for (const line of lines) {
    // The store serves: the next start's spare can be copied without slowing this one.
    if (line === SERVING && cleaning === undefined)
      spare ??= SpareCopy.begin(orders.template).catch(() => undefined);
    // The service's pid, to wait for before the database goes.
    else service = pidOf(line) ?? service;
  }
});
process.stdin.once('end', stop);
process.stdin.once('error', stop);
process.once('SIGTERM', stop);
// A terminal's Ctrl+C is the runner's to handle; the keeper follows when its pipe closes.
process.on('SIGINT', () => {});

async function start(): Promise<void> {
  await writeFile(join(orders.dataDir, KEEPER_PID_FILE), `${process.pid}\n`);
  if (!(await claimSpare(orders.template, clusterOf(orders.dataDir))))
    await copyTree(
      join(orders.template, CLUSTER_FOLDER),
      clusterOf(orders.dataDir),
    ).done;
  await copyTree(
    join(orders.template, PASSWORD_FILE),
    join(orders.dataDir, PASSWORD_FILE),
  ).done;
  // As root PostgreSQL runs as `postgres`, which must pass through mkdtemp's 0700 folder.
  if (userInfo().uid === 0) await chmod(orders.dataDir, 0o701);
  const log: string[] = [];
  try {
    postgres = await PostgresProcess.start(
      clusterOf(orders.dataDir),
      orders.port,
      (line) => log.push(line),
    );
  } catch {
    say({ failed: log.join('\n').slice(-2_000) });
    stop();
    return;
  }
  await recordPostmasterOwner(orders.dataDir);
  say({ ready: true });
}

starting = start().catch((error: unknown) => {
  say({ failed: String(error) });
  stop();
});
