// The database's own limit on this machine: the service's INSERT driven by pgbench, with
// no HTTP and no Node in the way.
import { execFile, execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// The statement the service and the baseline run for a new plant. Random ids across the
// whole positive range: collisions are negligible, and inserts land on random index
// leaves as the HTTP load's ids do.
const SCRIPT = `\\set id random(1, 9000000000000000000)
INSERT INTO plants (id, name, tag) VALUES (:id, 'Monstera deliciosa', 'tropical') ON CONFLICT (id) DO NOTHING RETURNING id;
`;

/** The pgbench version line, or undefined when pgbench is not on the PATH. */
export function pgbenchVersion() {
  try {
    return execFileSync('pgbench', ['--version'], { encoding: 'utf8' }).trim();
  } catch {
    return undefined;
  }
}

/**
 * Runs the INSERT for `seconds` on `clients` connections (prepared statements: the
 * cheapest way for the server, hence its limit). Returns transactions per second.
 */
export async function pgbench({ url, clients, seconds }) {
  const dir = await mkdtemp(join(tmpdir(), 'plant-store-pgbench-'));
  const script = join(dir, 'insert.sql');
  await writeFile(script, SCRIPT);
  const args = [
    '-n',
    '-M',
    'prepared',
    '-f',
    script,
    '-c',
    String(clients),
    '-j',
    String(Math.min(2, clients)),
    '-T',
    String(seconds),
    url,
  ];
  try {
    const output = await new Promise((resolve, reject) =>
      execFile(
        'pgbench',
        args,
        { encoding: 'utf8' },
        (error, stdout, stderr) =>
          error
            ? reject(new Error(`pgbench failed: ${stderr || error.message}`))
            : resolve(stdout + stderr),
      ),
    );
    const tps = /tps = ([\d.]+) \(without initial connection time\)/.exec(
      output,
    );
    const latency = /latency average = ([\d.]+) ms/.exec(output);
    const failed = /number of failed transactions: (\d+)/.exec(output);
    return {
      tps: tps ? Number(tps[1]) : NaN,
      latencyAverageMs: latency ? Number(latency[1]) : NaN,
      failed: failed ? Number(failed[1]) : 0,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
