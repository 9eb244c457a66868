import { readFileSync } from 'node:fs';
import { Environment } from '../../src/service/config/environment.js';

/**
 * docs/configuration.md's table mirrors Environment (src/service/config/environment.ts), the one
 * schema: every setting once, with the default the service really takes.
 */

const PAGE = 'docs/configuration.md';

/** `| \`NAME\` | \`default\` | meaning |` rows: the name and the default as written. */
function documentedDefaults(markdown: string): Map<string, string> {
  const rows = [
    ...markdown.matchAll(/^\| `([A-Z][A-Z0-9_]*)` \| ([^|]+) \|/gm),
  ];
  return new Map(
    rows.map(([, name, written]) => [name, written.trim().replace(/`/g, '')]),
  );
}

/** How the table writes a default: a list or value that is not there is "unset". */
function asWritten(value: unknown): string {
  if (value === undefined) return 'unset';
  if (Array.isArray(value))
    return value.length === 0 ? 'unset' : value.join(',');
  if (
    typeof value === 'string' ||
    typeof value === 'number' ||
    typeof value === 'boolean'
  )
    return String(value);
  throw new Error(`A default the table cannot show: ${JSON.stringify(value)}`);
}

describe(`the settings table in ${PAGE}`, () => {
  const documented = documentedDefaults(readFileSync(PAGE, 'utf8'));
  const defaults = Object.entries(new Environment());

  it('lists every setting of Environment, and nothing else', () => {
    expect(defaults.length).toBeGreaterThan(0);
    expect([...documented.keys()].sort()).toEqual(
      defaults.map(([name]) => name).sort(),
    );
  });

  it('gives each setting the default Environment takes', () => {
    expect(Object.fromEntries(documented)).toEqual(
      Object.fromEntries(
        defaults.map(([name, value]) => [name, asWritten(value)]),
      ),
    );
  });
});
