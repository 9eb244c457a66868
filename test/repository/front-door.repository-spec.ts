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
    // 'clientError' is Fastify's to add (it always adds one): the adapter hands it the
    // service's answer, and gives Fastify the server, so Fastify adds no request listener.
    const adapter = readFileSync(
      join(SRC, 'service/http-server/timed-fastify.adapter.ts'),
      'utf8',
    );
    expect(adapter).toContain('clientErrorHandler: answerClientError');
    expect(adapter).toContain('serverFactory:');
  });
});
