import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { freePort } from './free-port.js';

describe('freePort', () => {
  it('hands out loopback ports that can be bound, below the ephemeral range, never twice', async () => {
    const ports: number[] = [];
    for (let i = 0; i < 20; i += 1) ports.push(await freePort());
    expect(new Set(ports).size).toBe(ports.length);
    // This machine's ephemeral range, where an outgoing connection may take a port.
    const [ephemeralFirst] = readFileSync(
      '/proc/sys/net/ipv4/ip_local_port_range',
      'utf8',
    )
      .trim()
      .split(/\s+/)
      .map(Number);
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(10_000);
      expect(port).toBeLessThan(ephemeralFirst);
    }
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(ports[0], '127.0.0.1', resolve);
    });
    await new Promise((resolve) => server.close(resolve));
  });
});
