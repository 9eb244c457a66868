// Where one lone request's time goes (issue 32: the c=1 p50), measured inside the server:
// preloaded with --import, it stamps every POST with process.hrtime at Node's 'request'
// event, at each pg query sent and answered, at `response.end` and at 'finish', plus any
// `globalThis.__hop?.(label)` a throwaway build calls between them. On SIGUSR2 it writes the
// median offset of each stamp from 'request' (and its 10th percentile), over the requests since the last SIGUSR2, to
// HOP_TIMER_FILE. Meant for one request at a time (c=1): the stamps go to the one request
// in flight.
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { percentile } from '../../test-kit/percentile.mjs';

const file = process.env.HOP_TIMER_FILE ?? '/tmp/hop-timer.json';
const now = () => process.hrtime.bigint();
let current;
let done = [];

globalThis.__hop = (label) => {
  if (current !== undefined) current.marks.push([label, now()]);
};

const emit = http.Server.prototype.emit;
http.Server.prototype.emit = function (event, request, response) {
  if (event === 'request' && request.method === 'POST') {
    const record = { t0: now(), marks: [] };
    current = record;
    const end = response.end;
    response.end = function (...args) {
      record.marks.push(['response.end', now()]);
      return end.apply(this, args);
    };
    response.on('finish', () => {
      record.marks.push(['finish', now()]);
      done.push(record);
      if (current === record) current = undefined;
    });
  }
  return emit.apply(this, arguments);
};

// pg as the server resolves it (the same module, the same Client).
try {
  const require = createRequire(join(process.cwd(), 'package.json'));
  const { Client } = require('pg');
  const query = Client.prototype.query;
  Client.prototype.query = function (...args) {
    const record = current;
    record?.marks.push(['pg query sent', now()]);
    const result = query.apply(this, args);
    if (record !== undefined && result && typeof result.then === 'function')
      result.then(
        () => record.marks.push(['pg query answered', now()]),
        () => {},
      );
    return result;
  };
  const Pool = require('pg').Pool;
  const connect = Pool.prototype.connect;
  Pool.prototype.connect = function (...args) {
    current?.marks.push(['pool.connect called', now()]);
    return connect.apply(this, args);
  };
} catch (error) {
  process.stderr.write(`hop-timer: pg not patched: ${error.message}\n`);
}

process.on('SIGUSR2', () => {
  const offsets = new Map();
  for (const { t0, marks } of done) {
    const seen = new Map();
    for (const [label, at] of marks) {
      // A label stamped twice in one request keeps its order: "label #2".
      const n = (seen.get(label) ?? 0) + 1;
      seen.set(label, n);
      const key = n === 1 ? label : `${label} #${n}`;
      if (!offsets.has(key)) offsets.set(key, []);
      offsets.get(key).push([Number(at - t0) / 1000]);
    }
  }
  // The 10th percentile as well as the median: on a busy machine the wall clock of most
  // requests is stretched by other work, that of the fastest tenth much less.
  const median = (list) => percentile(list, 0.5);
  const rows = [...offsets]
    .map(([label, list]) => ({
      label,
      us: median(list.map(([wall]) => wall)),
      p10: percentile(
        list.map(([wall]) => wall),
        0.1,
      ),
      n: list.length,
    }))
    .sort((a, b) => a.us - b.us);
  writeFileSync(file, JSON.stringify({ requests: done.length, rows }));
  done = [];
});
