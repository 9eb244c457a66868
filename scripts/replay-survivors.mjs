// Puts each mutant a Stryker run left alive back into its file, one at a time, and runs the
// given unit specs against it: a quick check of new specs against the survivors they were
// written for, where a Stryker run of the folder takes most of an hour (docs/testing.md).
// A static mutant (module-level code) is checked the same way, since each Vitest run
// imports the module afresh. The file is restored after each mutant, and on an interrupt.
//
//   node scripts/replay-survivors.mjs /tmp/<run>.json <spec or folder>...
//
// It refuses a file whose source is no longer the one the run mutated.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';

const [report, ...specs] = process.argv.slice(2);
if (report === undefined || specs.length === 0)
  throw new Error('Usage: replay-survivors.mjs <run.json> <spec>...');
const { files } = JSON.parse(readFileSync(report, 'utf8'));

/** The offset of a Stryker location (lines and columns from 1) in `source`. */
function offsetOf(source, { line, column }) {
  let offset = 0;
  for (let at = 1; at < line; at += 1)
    offset = source.indexOf('\n', offset) + 1;
  return offset + column - 1;
}

/** Puts the file being mutated back as it was; also on Ctrl+C. */
let restore = () => {};
process.once('SIGINT', () => {
  restore();
  process.exit(130);
});

for (const [file, { source, mutants }] of Object.entries(files)) {
  if (readFileSync(file, 'utf8') !== source)
    throw new Error(`${file} changed since the run: run Stryker again`);
  restore = () => writeFileSync(file, source);
  const alive = mutants
    .filter(({ status }) => status === 'Survived' || status === 'NoCoverage')
    .sort((a, b) => a.location.start.line - b.location.start.line);
  for (const { location, mutatorName, replacement } of alive) {
    const start = offsetOf(source, location.start);
    const end = offsetOf(source, location.end);
    writeFileSync(
      file,
      source.slice(0, start) + replacement + source.slice(end),
    );
    try {
      const run = spawnSync(
        'npx',
        ['vitest', 'run', '--project', 'unit*', ...specs],
        { stdio: 'ignore' },
      );
      const verdict = run.status === 0 ? 'survives' : 'killed';
      console.log(
        `${file}:${location.start.line} ${mutatorName} ${JSON.stringify(replacement).slice(0, 60)}: ${verdict}`,
      );
    } finally {
      restore();
    }
  }
}
