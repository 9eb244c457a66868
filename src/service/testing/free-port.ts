// A free TCP port, also for test-kit/free-port.mjs: erasable TypeScript only, so Node runs it unbuilt.
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';

// Linux's default ip_local_port_range, where the file cannot be read.
const EPHEMERAL_DEFAULT = { first: 32_768, last: 60_999 };
const LOWEST = 10_000;
const handedOut = new Set<number>();

/** The kernel's ephemeral ports: one from there may be taken by an outgoing connection before the bind. */
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

/** A loopback port free a moment ago, below the ephemeral range, random, never twice in a process. */
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
