// A free TCP port: for plant-store/testing, and for this project's tests and benchmark
// through test-kit/free-port.mjs. Only erasable TypeScript and Node's own modules, so that
// Node runs this file as it is (the .mjs benchmark imports it unbuilt).
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';

// Linux's default ip_local_port_range, where the file cannot be read.
const EPHEMERAL_DEFAULT = { first: 32_768, last: 60_999 };
const LOWEST = 10_000;
const handedOut = new Set<number>();

/**
 * The ports the kernel gives to outgoing connections. A port handed out from among them
 * (what listen(0) does) may be taken by any client's connection between our check and
 * its server's bind, or while that server restarts (a PostgreSQL killed by a scenario):
 * "Address already in use" on a busy machine. Below that range only a listener that asks
 * for the port by number can take it.
 */
async function ephemeralRange(): Promise<{ first: number; last: number }> {
  const text = await readFile(
    '/proc/sys/net/ipv4/ip_local_port_range',
    'utf8',
  ).catch(() => undefined);
  const [first, last] = (text ?? '').trim().split(/\s+/).map(Number);
  return Number.isInteger(first) && Number.isInteger(last)
    ? { first, last }
    : EPHEMERAL_DEFAULT;
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A TCP port free a moment ago on the loopback interface, below the ephemeral range (so
 * that no outgoing connection takes it), chosen at random so that concurrent test
 * processes rarely pick the same one, and never twice by this process.
 */
export async function freePort(): Promise<number> {
  const { first } = await ephemeralRange();
  const span = first - LOWEST;
  for (let attempt = 0; span > 1_000 && attempt < 200; attempt += 1) {
    const port = LOWEST + Math.floor(Math.random() * span);
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    if (await canListen(port)) return port;
  }
  // A machine whose ephemeral range starts low: whatever the kernel offers.
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port =
        typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
