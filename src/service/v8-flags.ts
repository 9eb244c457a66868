/** The V8 flags the service runs with, however started (docs/runtime.md#the-four-v8-flags). */
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

/** The service's flags absent from the command line and NODE_OPTIONS (any value there is the operator's). */
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
 * A process without the flags replaces itself by `process.execve`, same pid: V8 sizes the young
 * generation before any JavaScript (docs/runtime.md#how-a-process-started-without-them-gets-them).
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
