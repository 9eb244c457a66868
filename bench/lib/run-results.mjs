// A run's results: every figure with what it was measured on, printed as the report,
// written to RESULTS.md (a whole run only) and, all of it, to bench/results/latest.json.
import { writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { productionNodeFlags } from '../../test-kit/node-process.mjs';
import { machineDescription } from './machine.mjs';
import { BENCH, RESULTS, ROOT } from './paths.mjs';
import { formatReport, writeResults } from './report.mjs';

/** The results of a run that `started` (its Date.now()), with the machine as it is now. */
export function runResults({
  started,
  loadStart,
  busyBefore,
  database,
  postgres,
  ctx,
  startup,
  references,
  runs,
  preload,
}) {
  return {
    meta: {
      date: new Date().toISOString(),
      command: [
        'npm run bench',
        ...(process.argv.length > 2 ? ['--', ...process.argv.slice(2)] : []),
      ].join(' '),
      ...machineDescription(),
      database: database.embedded
        ? 'embedded PostgreSQL (temporary directory)'
        : 'DATABASE_URL',
      postgres,
      pgbench: ctx.pgbench,
      runtimes: ctx.runtimes,
      serviceNodeFlags: productionNodeFlags(ROOT),
      loadStart,
      loadEnd: loadavg(),
      busyBefore,
      elapsedSeconds: (Date.now() - started) / 1000,
    },
    options: ctx.options,
    startup,
    references,
    runs,
    preload,
  };
}

/** Prints the report; RESULTS.md only for a whole run (not `partial`), latest.json always. */
export async function publishResults(results, { partial, log }) {
  const report = formatReport(results);
  process.stdout.write(`\n${report}\n`);
  if (!partial) await writeResults(join(BENCH, 'RESULTS.md'), report);
  // Every figure of the run, for whoever wants more than the table (not committed).
  await writeFile(
    join(RESULTS, 'latest.json'),
    JSON.stringify(results, null, 2),
  );
  log(
    partial
      ? 'written to bench/results/latest.json (an A/B, partial or profiled run: RESULTS.md unchanged)'
      : 'written to bench/RESULTS.md and bench/results/latest.json',
  );
}
