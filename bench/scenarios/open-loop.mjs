// The benchmark's open loop on its own, for a quick look at a running server: a constant
// arrival rate of creates (bench/README.md, "The load"), the figures printed as JSON.
//
//   node bench/scenarios/open-loop.mjs --url http://127.0.0.1:3000 --token T --rate 500 --seconds 10
import { commandLine } from '../lib/cli.mjs';
import { openLoop } from '../lib/open-loop.mjs';
import { createWorkload } from '../lib/workload.mjs';

const options = commandLine({
  numbers: { rate: 500, seconds: 10, warmup: 2 },
  strings: { url: 'http://127.0.0.1:3000', token: undefined },
});
if (options.token === undefined) throw new Error('--token is required');
const result = await openLoop({
  url: options.url,
  token: options.token,
  // Started from the clock so that reruns against the same table do not collide.
  workload: createWorkload({ start: Date.now() * 1000 }),
  rate: options.rate,
  seconds: options.seconds,
  warmupSeconds: options.warmup,
});
const { okIds, failedIds, lostIds, ...shown } = result;
console.log(JSON.stringify({ ...shown, ok: okIds.length }, null, 2));
