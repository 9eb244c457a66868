// The command line of `npm run bench` (bench/scenarios/run.mjs): its options, what they
// set for a full run and for a quick one, and its --help.
import { join } from 'node:path';
import { commandLine } from './cli.mjs';
import { RESULTS } from './paths.mjs';
import { TOPOLOGIES } from './references.mjs';

const HELP = `npm run bench -- [options]
  --quick          smoke check: 1 run, 1 s warm-up + 3 s per scenario, 1M preload only
  --runs N         repetitions (default 3; medians are reported)
  --skip-preload   no 1M / 10M preloaded-table scenarios
  --skip-references  no comparison with the grouping baseline and the docs-style app
  --references-only  only that comparison (wrk, pinned cores), after the start-up times
  --references LIST  only these beside the service and the grouping baseline (comma-separated:
                   baseline, docs-style, "service, no flags", "service on fastify",
                   "docs-style on fastify"; none: "")
  --versus DIST    a second service, from another build's dist/ directory, in the same rounds
                   of the references: B/A per round (an A/B on the targets' own measurement)
  --topology T     the references' topology: production (each server alone on its core,
                   wrk and PostgreSQL on the other: the targets), co-located (PostgreSQL on
                   the server's core), or both (default)
  --skip-tracing   no tracing cost (the service with tracing off, on at 100%, on at 1%)
  --tracing-only   only the tracing cost (production topology), after the start-up times
  --tracing-versus DIST  a build from before tracing beside the tracing cost's variants
  --tracing-warmup S  each tracing turn's warm-up (default 60, quick 1): at 1% the recorded
                   path is taken a few dozen times a second, and V8 compiles it over about a
                   minute; 3, the other scenarios' warm-up, measures that first minute
  --skip-build     use the existing dist/ (after a build of the current source)
  --skip-startup   no start-up times (an A/B of the references does not need them)
  --cpu-prof       start the service with --cpu-prof (profiles in bench/results/profiles;
                   profiling slows it, so the figures of such a run are not comparable)
  --ids KIND       random (default: inserts spread over the whole primary key index) or
                   sequential (increasing ids: inserts go to one place in the index)
  --idle-wait S    before each scenario, wait up to S seconds (default 10, quick 5) for
                   the machine to be at most 25% busy (0: do not wait)
  --note TEXT      a note for the heading of the results (e.g. "provisional")
DATABASE_URL set: that database (its name must contain "bench" or "test"); unset: an
embedded PostgreSQL in a temporary directory.
`;

/**
 * The run's command line; --help prints the options and exits, a wrong value stops the
 * run. `options` are the settings the results record, `topologies` the references' ones,
 * `serviceFlags` Node flags for the service, and `partial` says the run is not the
 * service's latest run (RESULTS.md is left as it is).
 */
export function runOptions() {
  const flags = commandLine({
    numbers: {
      runs: undefined,
      'idle-wait': undefined,
      'tracing-warmup': undefined,
    },
    flags: [
      'quick',
      'skip-preload',
      'skip-references',
      'references-only',
      'skip-tracing',
      'tracing-only',
      'skip-build',
      'skip-startup',
      'cpu-prof',
      'help',
    ],
    strings: {
      ids: 'random',
      note: undefined,
      versus: undefined,
      references: undefined,
      'tracing-versus': undefined,
      topology: 'both',
    },
  });

  if (flags.help) {
    process.stdout.write(HELP);
    process.exit(0);
  }

  const quick = flags.quick;
  const options = {
    runs: flags.runs ?? (quick ? 1 : 3),
    warmupSeconds: quick ? 1 : 3,
    tracingWarmupSeconds: flags['tracing-warmup'] ?? (quick ? 1 : 60),
    seconds: quick ? 3 : 10,
    openWarmupSeconds: quick ? 1 : 3,
    openSeconds: quick ? 3 : 10,
    pgbenchSeconds: quick ? 3 : 10,
    concurrency: [1, 16, 64, 256],
    pgbenchConcurrency: [16, 64],
    preloadConcurrency: 64,
    preloadRows: flags['skip-preload']
      ? []
      : quick
        ? [1_000_000]
        : [1_000_000, 10_000_000],
    referenceSeconds: quick ? 3 : 8,
    referenceC1Seconds: quick ? 2 : 3,
    ids: flags.ids,
    idleWaitSeconds: flags['idle-wait'] ?? (quick ? 5 : 10),
    note: flags.note,
  };
  if (!['random', 'sequential'].includes(options.ids))
    throw new Error('--ids must be random or sequential');
  const topologies =
    flags.topology === 'both' ? Object.keys(TOPOLOGIES) : [flags.topology];
  if (!topologies.every((name) => name in TOPOLOGIES))
    throw new Error(
      `--topology must be both or one of ${Object.keys(TOPOLOGIES).join(', ')}`,
    );
  if (!Number.isInteger(options.runs) || options.runs < 1)
    throw new Error('--runs must be a positive integer');

  // Profiling slows the service: the figures of such a run are not comparable.
  const serviceFlags = flags['cpu-prof']
    ? ['--cpu-prof', '--cpu-prof-dir', join(RESULTS, 'profiles')]
    : [];
  // An A/B, a partial set of references or a profiled run is not the service's latest run.
  const partial =
    flags.versus !== undefined ||
    flags.references !== undefined ||
    flags.topology !== 'both' ||
    flags['cpu-prof'] ||
    flags['skip-startup'] ||
    flags['tracing-only'];
  return { flags, options, topologies, serviceFlags, partial };
}
