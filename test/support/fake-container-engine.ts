import { once } from 'node:events';
import {
  createServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';

/** One answer of the fake engine: a status and a JSON body, or none. */
export type EngineAnswer = [status: number, body?: unknown];

export interface FakeContainerEngine {
  /** Its port on 127.0.0.1, which every container's ports are mapped to. */
  readonly port: number;
  /** Each request as `METHOD /path` (no API version, no query), in order. */
  readonly requests: string[];
  /** The JSON body of each request that had one, by request, in order. */
  readonly bodies: [request: string, body: unknown][];
  /** Answers for requests that start with `METHOD /path`, over the defaults. */
  answer(request: string, answer: EngineAnswer): void;
  /** Forgets the requests and the answers given with answer(). */
  reset(): void;
}

let running: Promise<FakeContainerEngine> | undefined;

/**
 * The process's fake engine, started at the first call: Testcontainers keeps the runtime it
 * first found for the whole process, so every spec in one module graph must share it.
 */
export function fakeContainerEngine(): Promise<FakeContainerEngine> {
  running ??= startFakeContainerEngine();
  return running;
}

/**
 * A Docker API on loopback that answers what Testcontainers asks: it finds a runtime, makes and
 * removes networks and containers (running at once, every port mapped to this server, every
 * command run with exit code 0) and pauses them, and refuses to pull an image (an image is
 * there only when a test says so). Testcontainers finds it through DOCKER_HOST (set before its first
 * use in the process: it keeps the runtime it found), with the reaper container turned off.
 */
async function startFakeContainerEngine(): Promise<FakeContainerEngine> {
  const requests: string[] = [];
  const bodies: [string, unknown][] = [];
  let answers = new Map<string, EngineAnswer>();
  let port = 0;
  let networkName = '';
  const created = new Map<string, { ExposedPorts?: Record<string, unknown> }>();
  const defaults = new Map<string, EngineAnswer>([
    ['GET /info', [200, { OperatingSystem: 'fake', ServerVersion: '0' }]],
    ['GET /containers/json', [200, []]],
    ['POST /networks/create', [201, { Id: 'network-1' }]],
    ['DELETE /', [204]],
    ['POST /containers/', [204]],
    ['GET /exec/', [200, { ExitCode: 0, Running: false }]],
    // The service's readiness, through the port every container is mapped to: this one.
    ['GET /health/ready', [200, { status: 'ok' }]],
    ['GET /images/', [404, { message: 'No such image' }]],
    ['POST /images/create', [500, { message: 'pull refused' }]],
  ]);
  /** A container made: running, its exposed ports mapped to this server, on the network made. */
  const inspect = (id: string): EngineAnswer => [
    200,
    {
      Id: id,
      Name: `/${id}`,
      Config: { Hostname: id, Labels: {} },
      State: {
        Status: 'running',
        Running: true,
        StartedAt: new Date(0).toISOString(),
        FinishedAt: new Date(0).toISOString(),
      },
      NetworkSettings: {
        Ports: Object.fromEntries(
          Object.keys(created.get(id)?.ExposedPorts ?? {}).map((exposed) => [
            exposed,
            [{ HostIp: '0.0.0.0', HostPort: String(port) }],
          ]),
        ),
        Networks: {
          [networkName]: {
            IPAddress: `10.88.0.${[...created.keys()].indexOf(id) + 2}`,
            NetworkID: 'network-1',
            Aliases: [],
          },
        },
      },
    },
  ];
  const answerTo = (request: string, body: unknown): EngineAnswer => {
    for (const [start, answer] of answers)
      if (request.startsWith(start)) return answer;
    if (request === 'POST /networks/create')
      networkName = (body as { Name: string }).Name;
    if (request === 'POST /containers/create') {
      const id = `container-${created.size + 1}`;
      created.set(id, body as { ExposedPorts?: Record<string, unknown> });
      return [201, { Id: id }];
    }
    const [, id, what] =
      /^GET \/containers\/([^/]+)\/(json)$/.exec(request) ?? [];
    if (what === 'json' && created.has(id)) return inspect(id);
    if (/^POST \/containers\/[^/]+\/exec$/.test(request))
      return [201, { Id: `exec-${requests.length}` }];
    for (const [start, answer] of defaults)
      if (request.startsWith(start)) return answer;
    return [404, { message: `no ${request} here` }];
  };
  const reply = (
    response: ServerResponse,
    [status, body]: EngineAnswer,
  ): void => {
    response.writeHead(status, { 'Content-Type': 'application/json' });
    response.end(body === undefined ? '' : JSON.stringify(body));
  };
  const server: Server = createServer((incoming: IncomingMessage, response) => {
    const path = (incoming.url ?? '')
      .replace(/^\/v[\d.]+\//, '/')
      .split('?')[0];
    const request = `${incoming.method} ${path}`;
    requests.push(request);
    // An exec's start keeps its request open (stdin): answered at once, with no output.
    if (/^POST \/exec\/[^/]+\/start$/.test(request))
      return reply(response, [200]);
    let text = '';
    incoming.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
    incoming.on('end', () => {
      const body: unknown = text === '' ? undefined : JSON.parse(text);
      if (body !== undefined) bodies.push([request, body]);
      reply(response, answerTo(request, body));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  ({ port } = server.address() as AddressInfo);
  // It must not hold the test process open.
  server.unref();
  process.env.DOCKER_HOST = `tcp://127.0.0.1:${port}`;
  process.env.TESTCONTAINERS_RYUK_DISABLED = 'true';
  return {
    port,
    requests,
    bodies,
    answer(request, answer) {
      answers = new Map([[request, answer], ...answers]);
    },
    reset() {
      requests.length = 0;
      bodies.length = 0;
      created.clear();
      answers = new Map();
    },
  };
}
