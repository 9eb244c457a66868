import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { freePort } from './free-port.js';

// The kernel's ephemeral range as each test has it: the file read, or made unreadable.
vi.mock('node:fs/promises', async (original) => {
  const actual = await original<typeof import('node:fs/promises')>();
  return { ...actual, readFile: vi.fn(actual.readFile) };
});

/** This machine's ephemeral range, where an outgoing connection may take a port. */
const [ephemeralFirst] = readFileSync(
  '/proc/sys/net/ipv4/ip_local_port_range',
  'utf8',
)
  .trim()
  .split(/\s+/)
  .map(Number);

function listen(port: number): Promise<Server> {
  const server = createServer();
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

const close = (server: Server) =>
  new Promise((resolve) => server.close(resolve));

/** The kernel's range file read as `text`, or failing to be read. */
function rangeFile(text: string | Error): void {
  vi.mocked(readFile).mockImplementationOnce(() =>
    text instanceof Error ? Promise.reject(text) : Promise.resolve(text),
  );
}

afterEach(() => vi.restoreAllMocks());

describe('freePort', () => {
  it('hands out loopback ports that can be bound, below the ephemeral range, never twice', async () => {
    const ports: number[] = [];
    for (let i = 0; i < 20; i += 1) ports.push(await freePort());
    expect(new Set(ports).size).toBe(ports.length);
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(10_000);
      expect(port).toBeLessThan(ephemeralFirst);
    }
    await close(await listen(ports[0]));
  });

  it("below the range the kernel's file gives", async () => {
    rangeFile('20000\t60999\n');
    const port = await freePort();
    expect(port).toBeGreaterThanOrEqual(10_000);
    expect(port).toBeLessThan(20_000);
  });

  it("below Linux's default range where the file cannot be read", async () => {
    rangeFile(new Error('ENOENT'));
    const port = await freePort();
    expect(port).toBeGreaterThanOrEqual(10_000);
    expect(port).toBeLessThan(32_768);
  });

  it('passes over a port something listens on', async () => {
    // Random picks: the port after `taken` (listened on), then the ones after that.
    const taken = (await freePort()) + 1;
    const server = await listen(taken);
    try {
      const span = ephemeralFirst - 10_000;
      const picks = [taken, taken + 1, taken + 2, taken + 3];
      const random = vi.spyOn(Math, 'random');
      for (const port of picks)
        random.mockReturnValueOnce((port - 10_000 + 0.5) / span);
      // Any of the others: one may have been handed out before, in this process.
      expect(picks.slice(1)).toContain(await freePort());
    } finally {
      await close(server);
    }
  });

  it('takes what the kernel offers when no random pick is left, or the range starts too low', async () => {
    // Every pick the one port handed out already: 200 tries, then the kernel's choice.
    const handedOut = await freePort();
    vi.spyOn(Math, 'random').mockReturnValue(
      (handedOut - 10_000 + 0.5) / (ephemeralFirst - 10_000),
    );
    const offered = await freePort();
    expect(Math.random).toHaveBeenCalledTimes(200);
    // The kernel picks from its ephemeral range.
    expect(offered).toBeGreaterThanOrEqual(ephemeralFirst);
    await close(await listen(offered));

    // 10,000 to 10,999: too few to pick from at random.
    rangeFile('11000 60999');
    expect(await freePort()).toBeGreaterThanOrEqual(ephemeralFirst);
    expect(Math.random).toHaveBeenCalledTimes(200);
  });
});
