// Loaded first (main.ts), so it must run on an older Node: plain syntax, Node's own modules.
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';

/** pino's number for `fatal`, as the service's own JSON lines write it. */
const FATAL = 60;

/** Whether `version` satisfies a caret `range` (^24.11.0), the only form judged. */
export function satisfiesEngines(range: string, version: string): boolean {
  const wanted = /^\^(\d+)\.(\d+)\.(\d+)$/.exec(range.trim());
  const actual = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version);
  if (wanted === null || actual === null) return true;
  const [major, minor, patch] = wanted.slice(1).map(Number);
  const [aMajor, aMinor, aPatch] = actual.slice(1).map(Number);
  if (aMajor !== major) return false;
  return aMinor !== minor ? aMinor > minor : aPatch >= patch;
}

/** A Node outside `engines` stops the start with one JSON line (npm only warns). */
export function refuseUnsupportedNode(): void {
  const manifest = JSON.parse(
    readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
  ) as { engines?: { node?: string } };
  const range = manifest.engines?.node;
  if (range === undefined || satisfiesEngines(range, process.version)) return;
  process.stdout.write(
    `${JSON.stringify({
      level: FATAL,
      time: Date.now(),
      pid: process.pid,
      hostname: hostname(),
      context: 'PlantStore',
      msg: `Node.js ${process.version} is not supported: Plant Store needs Node.js ${range} (package.json engines; npm ci brings it: docs/runtime.md)`,
    })}\n`,
  );
  process.exit(1);
}
