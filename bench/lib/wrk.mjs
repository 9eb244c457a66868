// Closed-loop load from wrk (Debian's package), pinned to one core with taskset while the
// servers and PostgreSQL are pinned to the other, as if the clients were on another
// machine. autocannon, in this Node.js process, saturates its core below what the fastest
// reference answers; wrk in C does not (the run proves it against a server that answers
// at once: `generatorCeiling`).
import { execFileSync, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// Bodies with unique ids: `base + (n * K mod 2^32)` is a permutation of the counter n (K
// odd), so ids never repeat within a run of under 2^32 requests, and spread over the key
// space as client-chosen ids would; each run gets its own base below 2^44. Half the
// bodies carry a tag. The summary is printed as one JSON line for the parser below.
const SCRIPT = `
local counter = 0
local base = tonumber(os.getenv("WRK_ID_BASE"))
local names = { "Monstera deliciosa", "Ficus lyrata", "Calathea orbifolia 'Silver'", "Pilea peperomioides" }
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. os.getenv("WRK_TOKEN")
request = function()
  counter = counter + 1
  local id = base + (counter * 2654435761) % 4294967296
  local name = names[counter % 4 + 1]
  local body
  if counter % 2 == 0 then
    body = string.format('{"id":%d,"name":"%s","tag":"indoor"}', id, name)
  else
    body = string.format('{"id":%d,"name":"%s"}', id, name)
  end
  return wrk.format(nil, "/plants", nil, body)
end
done = function(summary, latency, requests)
  io.write(string.format('WRK_SUMMARY {"requests":%d,"microseconds":%d,"non2xx":%d,"connect":%d,"read":%d,"write":%d,"timeout":%d,"p50":%d,"p99":%d}\\n',
    summary.requests, summary.duration, summary.errors.status, summary.errors.connect,
    summary.errors.read, summary.errors.write, summary.errors.timeout,
    latency:percentile(50), latency:percentile(99)))
end
`;

let scriptPath;
let runs = 0;

/** Whether wrk and taskset are on the PATH. */
export function wrkAvailable() {
  try {
    execFileSync('wrk', ['--version'], { stdio: 'ignore' });
  } catch (error) {
    // wrk --version exits 1 after printing its version: only a missing binary counts.
    if (error.code === 'ENOENT') return false;
  }
  try {
    execFileSync('taskset', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * `seconds` of closed loop from `connections` connections of one wrk thread on core
 * `cpu`: 200s per second, latency percentiles in ms, and the answers that were not 200 or
 * never came.
 */
export async function wrkClosedLoop({ url, token, connections, seconds, cpu }) {
  if (scriptPath === undefined) {
    scriptPath = join(tmpdir(), `plant-store-wrk-${process.pid}.lua`);
    writeFileSync(scriptPath, SCRIPT);
  }
  runs += 1;
  const base = (((process.pid % 2048) * 2 + runs) % 4096) * 2 ** 32;
  const output = await new Promise((resolve, reject) => {
    const child = spawn(
      'taskset',
      [
        '-c',
        String(cpu),
        'wrk',
        '-t1',
        `-c${connections}`,
        `-d${seconds}s`,
        '--timeout',
        '10s',
        '-s',
        scriptPath,
        url,
      ],
      {
        env: { ...process.env, WRK_TOKEN: token, WRK_ID_BASE: String(base) },
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let text = '';
    child.stdout.on('data', (chunk) => (text += chunk));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(text) : reject(new Error(`wrk exited ${code}`)),
    );
  });
  const line = /^WRK_SUMMARY (.*)$/m.exec(output);
  if (line === null) throw new Error(`wrk printed no summary:\n${output}`);
  const summary = JSON.parse(line[1]);
  const socketErrors =
    summary.connect + summary.read + summary.write + summary.timeout;
  const seconds_ = summary.microseconds / 1e6;
  return {
    requests: summary.requests,
    ok: summary.requests - summary.non2xx,
    rps: (summary.requests - summary.non2xx) / seconds_,
    offeredRps: summary.requests / seconds_,
    non2xx: summary.non2xx,
    socketErrors,
    p50: summary.p50 / 1000,
    p99: summary.p99 / 1000,
  };
}
