// Merges the incremental file of a narrower Stryker run (one folder, `--incrementalFile
// /tmp/<name>.json`) into the one kept in git, so that the next `npm run test:mutation`
// reuses its verdicts: a run's mutants replace the kept ones of the same files, and its
// tests join the kept tests by file and name (docs/testing.md#mutation-testing-npm-run-testmutation).
//
//   node scripts/merge-mutation-results.mjs [--lines] /tmp/<name>.json [reports/stryker-incremental.json]
//
// With `--lines`, for a run of some lines (`--mutate file:10-20`), only those lines' mutants
// are replaced, and the file's others kept while its source is unchanged.
//
// Test ids are numbers a run hands out, so each test of the merged run is given the kept id
// of the same test, or a new one.
import { readFileSync, writeFileSync } from 'node:fs';

const lines = process.argv.includes('--lines');
const [from, into = 'reports/stryker-incremental.json'] = process.argv
  .slice(2)
  .filter((argument) => argument !== '--lines');
if (from === undefined)
  throw new Error(
    'Usage: merge-mutation-results.mjs [--lines] <run.json> [kept.json]',
  );
const run = JSON.parse(readFileSync(from, 'utf8'));
const kept = JSON.parse(readFileSync(into, 'utf8'));

const keyOf = (file, name) => `${file}\n${name}`;
const keptIds = new Map();
let lastId = 0;
for (const [file, { tests }] of Object.entries(kept.testFiles))
  for (const { id, name } of tests) {
    keptIds.set(keyOf(file, name), id);
    lastId = Math.max(lastId, Number(id));
  }

/** The run's test id → the kept file's id of the same test. */
const idOf = new Map();
for (const [file, { tests, source }] of Object.entries(run.testFiles ?? {})) {
  const keptFile = (kept.testFiles[file] ??= { tests: [], source });
  keptFile.source = source;
  for (const test of tests) {
    const key = keyOf(file, test.name);
    let id = keptIds.get(key);
    if (id === undefined) {
      lastId += 1;
      id = String(lastId);
      keptIds.set(key, id);
      keptFile.tests.push({ ...test, id });
    } else {
      const index = keptFile.tests.findIndex(({ name }) => name === test.name);
      keptFile.tests[index] = { ...test, id };
    }
    idOf.set(test.id, id);
  }
}

const mapped = (ids) => ids?.map((id) => idOf.get(id));
/** Where, and what, a mutant is: the same in both files for the same mutant of one source. */
const mutantKey = ({ location, mutatorName, replacement }) =>
  JSON.stringify([location, mutatorName, replacement]);
// Only verdicts: a mutant left out by `--ignoreStatic`, or not reached before an interrupt,
// is left for the next run to test.
const NOT_A_VERDICT = new Set(['Ignored', 'Pending']);
for (const [file, result] of Object.entries(run.files)) {
  const mutants = result.mutants
    .filter(({ status }) => !NOT_A_VERDICT.has(status))
    .map((mutant) => ({
      ...mutant,
      coveredBy: mapped(mutant.coveredBy),
      killedBy: mapped(mutant.killedBy),
    }));
  const before = kept.files[file];
  const others =
    lines && before?.source === result.source
      ? before.mutants.filter(
          (mutant) => !mutants.some((m) => mutantKey(m) === mutantKey(mutant)),
        )
      : [];
  kept.files[file] = { ...result, mutants: [...others, ...mutants] };
}

writeFileSync(into, `${JSON.stringify(kept, null, 2)}\n`);
console.log(
  `${Object.keys(run.files).length} files merged into ${into} (${idOf.size} tests)`,
);
