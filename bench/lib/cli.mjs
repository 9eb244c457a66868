// What every scenario (bench/scenarios/) starts with: its command line and its log.
import { parseArgs } from 'node:util';
import { machineDescription } from './machine.mjs';

/**
 * The command line: `numbers` are the options that take a number (name: default, or
 * undefined for none), `flags` those that take nothing, `strings` those that take text
 * (name: default). With `rest`, words that are not options (Node flags or variants, often
 * after `--`) are allowed, in `rest`. A number option given something else stops the
 * scenario.
 */
export function commandLine({
  numbers = {},
  flags = [],
  strings = {},
  rest = false,
} = {}) {
  const options = {};
  for (const [name, value] of [
    ...Object.entries(numbers),
    ...Object.entries(strings),
  ])
    options[name] = {
      type: 'string',
      ...(value === undefined ? {} : { default: String(value) }),
    };
  for (const name of flags) options[name] = { type: 'boolean', default: false };
  const { values, positionals } = parseArgs({
    allowPositionals: rest,
    options,
  });
  for (const name of Object.keys(numbers)) {
    if (values[name] === undefined) continue;
    const value = Number(values[name]);
    if (Number.isNaN(value))
      throw new Error(`--${name} takes a number, not "${values[name]}"`);
    values[name] = value;
  }
  return { ...values, rest: positionals };
}

/** Writes a scenario's progress to stderr, each line marked with its name: `[check] ...`. */
export function logger(name) {
  return (message) => process.stderr.write(`[${name}] ${message}\n`);
}

/** Prints a scenario's record as JSON: the machine, when it ran, its command, then `figures`. */
export function printRecord(started, figures) {
  process.stdout.write(
    `${JSON.stringify(
      {
        machine: machineDescription(),
        started,
        finished: new Date().toISOString(),
        command: process.argv.slice(1).join(' '),
        ...figures,
      },
      null,
      2,
    )}\n`,
  );
}
