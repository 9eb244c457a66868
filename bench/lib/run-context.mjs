// What every measurement of a run works with: the database and a pool on it, the token the
// servers accept, the workload, and the run's settings, log and clean-ups.
import { join } from 'node:path';
import { CleanUps } from './clean-ups.mjs';
import { harnessPool, openDatabase } from './database.mjs';
import { RESULTS } from './paths.mjs';
import { pgbenchVersion } from './pgbench.mjs';
import { postmasterOf, setPostmasterPid } from './usage.mjs';
import { createWorkload, newToken } from './workload.mjs';

/**
 * Opens the run's database (DATABASE_URL's, or an embedded one) and answers the context
 * the measurements share, and the database; both are closed by `cleanUps`.
 */
export async function openRunContext({ options, serviceFlags, log, cleanUps }) {
  const database = await openDatabase(log);
  cleanUps.add(() => database.close());
  const pool = harnessPool(database.url);
  cleanUps.add(() => pool.end());
  // A backend's parent is the postmaster: its processes are ours when counting others' CPU.
  const { rows } = await pool.query('SELECT pg_backend_pid() AS pid');
  const postmasterPid = postmasterOf(rows[0].pid);
  setPostmasterPid(postmasterPid);
  const ctx = {
    pool,
    postmasterPid,
    logFile: join(RESULTS, 'service.log'),
    databaseUrl: database.url,
    token: newToken(),
    workload: createWorkload({ spread: options.ids === 'random' }),
    pgbench: pgbenchVersion(),
    options,
    serviceFlags,
    log,
    cleanUps,
  };
  if (!ctx.pgbench)
    log('pgbench is not on the PATH: the database reference is skipped');
  return { ctx, database };
}

/**
 * A scenario's whole run: `body(ctx, cleanUps)` on a fresh run context (ids spread over the
 * key space, the service's own flags), everything it started stopped on the way out, also
 * on Ctrl-C.
 */
export async function runScenario(log, body) {
  const cleanUps = new CleanUps(log);
  cleanUps.onSignals();
  try {
    const { ctx } = await openRunContext({
      options: { ids: 'random' },
      serviceFlags: [],
      log,
      cleanUps,
    });
    await body(ctx, cleanUps);
  } finally {
    await cleanUps.runAll();
  }
}
