import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');
const SRC = join(ROOT, 'src');

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') && !path.endsWith('.spec.ts') ? [path] : [];
  });
}

/** Every place in src that puts a listener on Node's HTTP server, or takes one off. */
function serverListeners(): string[] {
  const found: string[] = [];
  for (const file of sourceFiles(SRC)) {
    const lines = readFileSync(file, 'utf8').split('\n');
    lines.forEach((line, index) => {
      if (
        /removeAllListeners\(|prependListener\(|emit\('request'|\.on\('(request|connection|clientError|checkContinue|checkExpectation)'/.test(
          line,
        )
      )
        found.push(`${relative(ROOT, file)}:${index + 1}`);
    });
  }
  return found;
}

describe('the front door (issue 34 item 2)', () => {
  it('is the one place that puts listeners on the server: no listener removed, prepended or re-emitted elsewhere', () => {
    const places = serverListeners();
    const files = new Set(places.map((place) => place.split(':')[0]));
    // The connection cap takes over Node's own 'connection' listener; the front door calls
    // it first, at the same moment.
    expect([...files].sort()).toEqual([
      'src/service/front-door.ts',
      'src/service/http-server/connection-cap.ts',
    ]);
    const frontDoor = readFileSync(join(SRC, 'service/front-door.ts'), 'utf8');
    expect(frontDoor).toContain('capConnections(server');
    expect(places.length).toBeGreaterThanOrEqual(4);
    // Fastify always adds a 'clientError' listener of its own: the door replaces it with the
    // service's answer. The adapter gives Fastify the server, so Fastify adds no request
    // listener.
    expect(frontDoor).toContain(
      "server.removeAllListeners('clientError');\n  server.on('clientError', answerClientError);",
    );
    const adapter = readFileSync(
      join(SRC, 'service/http-server/timed-fastify.adapter.ts'),
      'utf8',
    );
    expect(adapter).not.toContain('clientErrorHandler');
    expect(adapter).toContain('serverFactory:');
  });
});

/** The step numbers of a file's step comments (`// 6.`, `// 6, 8, 9.`, `// 6-10.`), in order. */
function stepsOf(path: string): number[] {
  const text = readFileSync(join(ROOT, path), 'utf8');
  return [...text.matchAll(/^\s*\/\/ (\d+)(?:[-,][\d, -]*)?\. /gm)].map(
    ([, step]) => Number(step),
  );
}

describe('the front door reads in the order a request meets it (issue 41)', () => {
  it("writes every step once, for both adapters, in order: Node's 0-5, then 6-10 with the adapter's pieces in their place", () => {
    expect(stepsOf('src/service/front-door.ts')).toEqual([
      0, 1, 2, 2, 3, 4, 5, 6, 6, 6, 7, 10,
    ]);
  });

  it.each(['express-door.ts', 'fastify-door.ts'])(
    "%s writes only the adapter's own pieces of steps 6 to 10, in order",
    (file) => {
      expect(stepsOf(`src/service/${file}`)).toEqual([6, 6, 10]);
    },
  );

  it('has docs/architecture.md walk the same hops, 0 to 20, in order', () => {
    const page = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
    const hops = [...page.matchAll(/^(\d+)\. \*\*/gm)].map(([, hop]) =>
      Number(hop),
    );
    expect(hops).toEqual(Array.from({ length: 21 }, (_, hop) => hop));
  });
});
