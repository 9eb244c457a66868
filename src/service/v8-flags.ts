/**
 * The V8 flags the service runs with, however it is started (docs/runtime.md says why
 * each, bench/RESULTS.md measures them). Without them, at 64 concurrent creates, V8 13
 * sizes the young generation for the machine's memory (2 x 64 MB semi-spaces on a large
 * one) and lets the old generation grow to about 4 times what is live: the peak RSS was
 * 300 MB and more instead of about 170.
 */
export const SERVICE_V8_FLAGS: readonly string[] = [
  '--max-semi-space-size=16',
  '--heap-growing-percent=50',
  '--no-maglev',
  '--no-allocation-site-pretenuring',
];

/** A flag's name as V8 reads it: "_" and "-" alike, without its value or "no-" prefix. */
function flagName(option: string): string {
  const name = option.replace(/^--?/, '').split('=')[0].replaceAll('_', '-');
  return name.startsWith('no-') ? name.slice(3) : name;
}

/**
 * The service's flags that neither the command line nor NODE_OPTIONS sets, either way: a
 * flag given there, with any value, or `--maglev` for `--no-maglev`, is the operator's
 * choice.
 */
export function missingV8Flags(
  execArgv: readonly string[],
  nodeOptions = '',
): string[] {
  const given = new Set(
    [...execArgv, ...nodeOptions.split(/\s+/)]
      .filter((option) => option.startsWith('-'))
      .map(flagName),
  );
  return SERVICE_V8_FLAGS.filter((flag) => !given.has(flagName(flag)));
}

/**
 * Makes sure this process runs with the service's V8 flags. V8 reads the young generation's
 * size once, when it creates the heap, before any JavaScript runs: `v8.setFlagsFromString`
 * changes the other three but not that one (measured: bench/RESULTS.md). So a process
 * started without them replaces itself with `node <the missing flags> <its own flags>
 * <script> <arguments>`: `process.execve`, the same process id (a container's PID 1 stays
 * node, signals reach it as before), nothing of the first image kept, no parent left behind
 * to hold memory. Called before anything else is loaded. Returns only when nothing is
 * missing, or where the process cannot replace itself (Windows) or failed to (a warning):
 * the service then runs on V8's defaults.
 */
export function runWithServiceV8Flags(): void {
  // Node's own variable, read before the service's configuration exists.
  const missing = missingV8Flags(process.execArgv, process.env.NODE_OPTIONS);
  if (missing.length === 0 || process.execve === undefined) return;
  try {
    process.execve(process.execPath, [
      process.argv0,
      ...missing,
      ...process.execArgv,
      ...process.argv.slice(1),
    ]);
  } catch (error) {
    process.emitWarning(
      `Running without the V8 flags ${missing.join(' ')}: ${String(error)}`,
    );
  }
}
