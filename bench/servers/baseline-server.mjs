// The reference the service is measured against: the same work for POST /plants (bearer
// check, JSON parse, type checks, INSERT ... ON CONFLICT, the answer) on node:http and a
// pg Pool, with no framework. It is a yardstick, not a second implementation of the
// contract: only what a fair comparison needs is here.
//
// With GROUP_INSERTS=1 it groups the inserts of concurrent requests into one
// INSERT ... SELECT FROM unnest(...) per turn of the event loop, as the service does
// (src/lib/plants/plant-insert.batcher.ts): the ceiling of this stack, the same database work
// with no framework around it. Without it, one INSERT per request.
//
// Environment: DATABASE_URL, API_TOKENS (comma-separated), PORT, HOST, DATABASE_POOL_SIZE,
// GROUP_INSERTS. The plants table must exist (the service's migration creates it).
import { createHash, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import pg from 'pg';

const BODY_LIMIT = 16 * 1024;
const env = process.env;

// The same hashing and constant-time comparison as the service, so that part costs the same.
const tokenHashes = (env.API_TOKENS ?? '')
  .split(',')
  .map((token) => token.trim())
  .filter((token) => token.length > 0)
  .map((token) => createHash('sha256').update(token).digest());
if (tokenHashes.length === 0) throw new Error('API_TOKENS is not set');

// The service's pool settings (src/service/database/data-source-options.ts), so the database sees
// the same number of connections and the same timeouts.
const pool = new pg.Pool({
  connectionString: env.DATABASE_URL,
  max: Number(env.DATABASE_POOL_SIZE ?? 10),
  application_name: 'plant-store-baseline',
  connectionTimeoutMillis: 2000,
  statement_timeout: 5000,
  query_timeout: 6000,
  keepAlive: true,
});
// An idle client losing its connection must not take the process down.
pool.on('error', () => {});

const INSERT =
  'INSERT INTO plants (id, name, tag) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING RETURNING id';
const SELECT = 'SELECT name, tag FROM plants WHERE id = $1';
const INSERT_GROUP =
  'INSERT INTO plants (id, name, tag) SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[]) ' +
  'ON CONFLICT (id) DO NOTHING RETURNING id::text AS id';

/** One INSERT per request: resolves true when this row was written. */
async function insertOne(id, name, tag) {
  const inserted = await pool.query(INSERT, [id, name, tag]);
  return inserted.rowCount === 1;
}

// Grouping: rows queue until the next turn of the event loop, then go in one statement;
// at most four statements at once (the service's MAX_BATCHES_IN_FLIGHT), the rest wait
// for the next. Rows go in id order, so two statements never wait on each other's locks.
const MAX_GROUPS_IN_FLIGHT = 4;
let queued = [];
let groupsInFlight = 0;
let flushScheduled = false;

function scheduleFlush() {
  if (flushScheduled || groupsInFlight >= MAX_GROUPS_IN_FLIGHT) return;
  flushScheduled = true;
  setImmediate(flush);
}

function flush() {
  flushScheduled = false;
  if (queued.length === 0 || groupsInFlight >= MAX_GROUPS_IN_FLIGHT) return;
  const group = queued.sort((a, b) => a.id - b.id);
  queued = [];
  groupsInFlight += 1;
  pool
    .query(INSERT_GROUP, [
      group.map((row) => row.id),
      group.map((row) => row.name),
      group.map((row) => row.tag),
    ])
    .then(
      ({ rows }) => {
        const written = new Set(rows.map((row) => row.id));
        for (const row of group) row.resolve(written.delete(String(row.id)));
      },
      (error) => {
        for (const row of group) row.reject(error);
      },
    )
    .finally(() => {
      groupsInFlight -= 1;
      scheduleFlush();
    });
}

/** Grouped: resolves true when this row was written. */
function insertGrouped(id, name, tag) {
  return new Promise((resolve, reject) => {
    queued.push({ id, name, tag, resolve, reject });
    scheduleFlush();
  });
}

const insert = env.GROUP_INSERTS === '1' ? insertGrouped : insertOne;

function send(res, status, body, headers = {}) {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

function fail(res, status, message, headers) {
  send(res, status, { error: status, message }, headers);
}

function authorized(header) {
  const match = /^bearer ([\x21-\x7e]+)$/i.exec(header ?? '');
  if (match === null) return false;
  const presented = createHash('sha256').update(match[1]).digest();
  let ok = false;
  // No early exit, like the service: every stored hash is compared.
  for (const hash of tokenHashes) ok = timingSafeEqual(hash, presented) || ok;
  return ok;
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on('data', (chunk) => {
      size += chunk.length;
      if (size > BODY_LIMIT) {
        reject(Object.assign(new Error('too large'), { status: 413 }));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** The NewPlant rules that cost something: types, and ids the parser can hold exactly. */
function invalid(plant) {
  if (plant === null || typeof plant !== 'object' || Array.isArray(plant))
    return 'The body must be a JSON object.';
  // JSON.parse rounds integers beyond 2^53: refusing them is honest, storing them is not.
  if (!Number.isSafeInteger(plant.id)) return 'id must be an integer.';
  if (typeof plant.name !== 'string') return 'name must be a string.';
  if (plant.tag !== undefined && typeof plant.tag !== 'string')
    return 'tag must be a string.';
  return undefined;
}

async function createPlant(req, res) {
  if (!authorized(req.headers.authorization)) {
    fail(res, 401, 'A valid bearer token is required.', {
      'www-authenticate': 'Bearer realm="plant-store"',
    });
    return;
  }
  if (!/^application\/json\b/i.test(req.headers['content-type'] ?? '')) {
    fail(res, 415, 'The body must be application/json.');
    return;
  }
  let plant;
  try {
    plant = JSON.parse(await readBody(req));
  } catch (error) {
    if (error.status === 413) fail(res, 413, 'The body is too large.');
    else fail(res, 400, 'The body is not valid JSON.');
    return;
  }
  const problem = invalid(plant);
  if (problem !== undefined) {
    fail(res, 400, problem);
    return;
  }
  const { id, name } = plant;
  const tag = plant.tag ?? null;
  if (!(await insert(id, name, tag))) {
    // The id was taken: the same content is a safe retry, other content a conflict.
    const stored = await pool.query(SELECT, [id]);
    const row = stored.rows[0];
    if (row === undefined || row.name !== name || row.tag !== tag) {
      fail(res, 409, 'A plant with this id already exists.');
      return;
    }
  }
  send(res, 200, tag === null ? { name } : { name, tag });
}

async function handle(req, res) {
  const path = req.url.split('?', 1)[0];
  if (path === '/plants') {
    if (req.method !== 'POST') {
      fail(res, 405, 'Only POST is allowed.', { allow: 'POST' });
      return;
    }
    await createPlant(req, res);
    return;
  }
  if (path === '/health' && req.method === 'GET') {
    await pool.query('SELECT 1');
    send(res, 200, { status: 'ok' });
    return;
  }
  fail(res, 404, 'Not found.');
}

const server = http.createServer((req, res) => {
  handle(req, res).catch((error) => {
    if (res.headersSent) return;
    // Connection-level failures are the database being away (503), the rest a 500.
    const unavailable =
      /ECONNREFUSED|ECONNRESET|timeout|terminat/i.test(error.message ?? '') ||
      error.code === '57P01';
    if (unavailable)
      fail(res, 503, 'The database is unavailable.', { 'retry-after': '2' });
    else fail(res, 500, 'Internal error.');
  });
});
// The same keep-alive as Node's default server, which Nest's Express adapter uses too.
server.listen(Number(env.PORT ?? 3001), env.HOST ?? '127.0.0.1');

const stop = () => {
  server.close(() => pool.end().then(() => process.exit(0)));
  server.closeIdleConnections();
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
