// The tests that kill no mutant they cover, from a Stryker JSON report of a run with
// `--disableBail` (every covering test run against each mutant, so `killedBy` names every
// killer). Such a test is a candidate for one that asserts too little: docs/testing.md,
// "the disableBail run".
//
//   npx stryker run --disableBail --ignoreStatic --mutate '<files>' \
//     --reporters json,clear-text,progress --incrementalFile /tmp/<name>.json --concurrency 1
//   node scripts/mutation-idle-tests.mjs [reports/mutation/mutation.json]
//
// Only mutants that ran count as covered: those that do not compile, static ones left out by
// `--ignoreStatic` and those no test reaches did not run against any test.
import { readFileSync } from 'node:fs';

const RAN = new Set(['Killed', 'Survived', 'Timeout', 'RuntimeError']);

const report = JSON.parse(
  readFileSync(process.argv[2] ?? 'reports/mutation/mutation.json', 'utf8'),
);

/** Each test's name and file, by the id the mutants use. */
const tests = new Map();
for (const [file, { tests: inFile }] of Object.entries(report.testFiles ?? {}))
  for (const { id, name } of inFile)
    tests.set(id, { file, name, covers: 0, kills: 0 });

let mutantsRun = 0;
for (const { mutants } of Object.values(report.files))
  for (const mutant of mutants) {
    if (!RAN.has(mutant.status)) continue;
    mutantsRun += 1;
    for (const id of mutant.coveredBy ?? []) tests.get(id).covers += 1;
    for (const id of mutant.killedBy ?? []) tests.get(id).kills += 1;
  }

const covering = [...tests.values()].filter(({ covers }) => covers > 0);
const idle = covering.filter(({ kills }) => kills === 0);
console.log(
  `${mutantsRun} mutants run; ${tests.size} tests in the report, ${covering.length} covering at least one, ` +
    `${covering.length - idle.length} killing at least one, ${idle.length} killing none`,
);
const byFile = Map.groupBy(idle, ({ file }) => file);
for (const [file, inFile] of [...byFile].sort(
  (a, b) => b[1].length - a[1].length,
))
  for (const { name, covers } of inFile)
    console.log(`${file}\t${name}\t(covers ${covers})`);
