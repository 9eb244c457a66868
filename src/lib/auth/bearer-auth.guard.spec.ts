import {
  Controller,
  Get,
  type INestApplication,
  Injectable,
  Req,
} from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { Request } from 'express';
import { DatabaseDownError } from '../database/database-errors.js';
import { ApiErrorsModule } from '../errors/api-errors.module.js';
import { AuthModule } from './auth.module.js';
import type { AuthModuleOptions } from './auth-module.options.js';
import { Public } from './public.decorator.js';
import { RequiresToken } from './requires-token.decorator.js';
import { type AuthenticatedClient, TokenVerifier } from './token-verifier.js';

/** A host's own verifier (AuthModule's tokenVerifier): two clients' tokens. */
@Injectable()
class TwoClients extends TokenVerifier {
  static failure: Error | undefined;

  verify(token: string): Promise<AuthenticatedClient | undefined> {
    if (TwoClients.failure !== undefined)
      return Promise.reject(TwoClients.failure);
    const name = { 'token-a': 'client a', 'token-b': 'client b' }[token];
    return Promise.resolve(name === undefined ? undefined : { name });
  }
}

@Controller('routes')
class Routes {
  @Get('plain')
  plain(@Req() request: Request) {
    return { user: (request.user as AuthenticatedClient | undefined)?.name };
  }

  @Public()
  @Get('public')
  open() {
    return { open: true };
  }

  @RequiresToken()
  @Get('requires-token')
  guarded(@Req() request: Request) {
    return { user: (request.user as AuthenticatedClient).name };
  }
}

@Public()
@Controller('public-class')
class PublicRoutes {
  @Get()
  open() {
    return { open: true };
  }
}

@RequiresToken()
@Controller('token-class')
class TokenRoutes {
  @Get()
  guarded() {
    return { guarded: true };
  }
}

/** A Nest application with AuthModule as a host imports it, listening on a free port. */
async function appWith(
  options: AuthModuleOptions,
  globalGuard: boolean,
): Promise<{ app: INestApplication; url: string }> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      AuthModule.forRoot({
        ...options,
        tokenVerifier: TwoClients,
        globalGuard,
      }),
      ApiErrorsModule,
    ],
    controllers: [Routes, PublicRoutes, TokenRoutes],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.listen(0, '127.0.0.1');
  return { app, url: await app.getUrl() };
}

async function answer(url: string, authorization?: string) {
  const response = await fetch(url, {
    headers: authorization === undefined ? {} : { authorization },
  });
  return {
    status: response.status,
    challenge: response.headers.get('www-authenticate'),
    retryAfter: response.headers.get('retry-after'),
    body: (await response.json()) as unknown,
  };
}

const unauthorized = (challenge: string) => ({
  status: 401,
  challenge,
  retryAfter: null,
  body: {
    error: 401,
    message: 'A valid bearer token is required in the Authorization header.',
  },
});
const NO_TOKEN = 'Bearer realm="plant-store"';
const INVALID_TOKEN = 'Bearer realm="plant-store", error="invalid_token"';

describe('BearerAuthGuard and TokenRateLimitGuard, in a Nest application', () => {
  let app: INestApplication | undefined;
  afterEach(async () => {
    TwoClients.failure = undefined;
    await app?.close();
    app = undefined;
  });

  describe('as the global guard (the service)', () => {
    let url = '';
    beforeEach(async () => {
      ({ app, url } = await appWith({ authFailureLimit: 100 }, true));
    });

    it('serves a valid token, with its client on the request', async () => {
      expect(await answer(`${url}/routes/plain`, 'Bearer token-a')).toEqual({
        status: 200,
        challenge: null,
        retryAfter: null,
        body: { user: 'client a' },
      });
      expect(
        (await answer(`${url}/routes/plain`, 'bearer token-b')).body,
      ).toEqual({ user: 'client b' });
    });

    it('refuses a request with no token 401, naming no error (RFC 6750 section 3)', async () => {
      expect(await answer(`${url}/routes/plain`)).toEqual(
        unauthorized(NO_TOKEN),
      );
      expect(await answer(`${url}/routes/plain`, 'Basic dXNlcjpwdw==')).toEqual(
        unauthorized(NO_TOKEN),
      );
      expect(await answer(`${url}/routes/plain`, 'Bearer ')).toEqual(
        unauthorized(NO_TOKEN),
      );
      // Only a header that starts with the Bearer scheme presents a token.
      expect(
        await answer(`${url}/routes/plain`, 'Basic bearer dXNlcjpwdw=='),
      ).toEqual(unauthorized(NO_TOKEN));
    });

    it('refuses an unknown token 401 with error="invalid_token"', async () => {
      expect(await answer(`${url}/routes/plain`, 'Bearer nope')).toEqual(
        unauthorized(INVALID_TOKEN),
      );
      expect(await answer(`${url}/routes/plain`, 'Bearer   nope')).toEqual(
        unauthorized(INVALID_TOKEN),
      );
    });

    it('reads the token from the Authorization header only, never the query string', async () => {
      expect(await answer(`${url}/routes/plain?access_token=token-a`)).toEqual(
        unauthorized(NO_TOKEN),
      );
    });

    it('opens the routes and controllers marked @Public()', async () => {
      expect((await answer(`${url}/routes/public`)).body).toEqual({
        open: true,
      });
      expect((await answer(`${url}/public-class`)).body).toEqual({
        open: true,
      });
    });

    it('answers 503 with Retry-After when the verifier cannot decide: not the client failing', async () => {
      TwoClients.failure = new DatabaseDownError();
      expect(await answer(`${url}/routes/plain`, 'Bearer token-a')).toEqual({
        status: 503,
        challenge: null,
        retryAfter: '2',
        body: {
          error: 503,
          message: 'The database is unavailable; retry later.',
        },
      });
    });
  });

  describe("as a host's guard (not global)", () => {
    let url = '';
    beforeEach(async () => {
      ({ app, url } = await appWith({}, false));
    });

    it("leaves the host's routes open", async () => {
      expect(await answer(`${url}/routes/plain`)).toMatchObject({
        status: 200,
        body: {},
      });
    });

    it('guards the routes and controllers marked @RequiresToken()', async () => {
      expect(await answer(`${url}/routes/requires-token`)).toEqual(
        unauthorized(NO_TOKEN),
      );
      expect(await answer(`${url}/token-class`)).toEqual(
        unauthorized(NO_TOKEN),
      );
      expect(
        (await answer(`${url}/routes/requires-token`, 'Bearer token-a')).body,
      ).toEqual({ user: 'client a' });
    });
  });

  it('answers 429 with Retry-After once an address is past its failure limit, still serving a valid token', async () => {
    let url: string;
    ({ app, url } = await appWith(
      { authFailureLimit: 2, authFailureWindowMs: 60_000 },
      true,
    ));
    const failures = [];
    for (let attempt = 0; attempt < 4; attempt += 1)
      failures.push(await answer(`${url}/routes/plain`, 'Bearer nope'));
    expect(failures.map(({ status }) => status)).toEqual([401, 401, 429, 429]);
    expect(failures[2]).toEqual({
      status: 429,
      challenge: null,
      retryAfter: '60',
      body: { error: 429, message: 'Too many requests; retry later.' },
    });
    expect((await answer(`${url}/routes/plain`, 'Bearer token-a')).status).toBe(
      200,
    );
  });

  it('limits each token to its own tokenRateLimit per window, 429 with Retry-After past it', async () => {
    let url: string;
    ({ app, url } = await appWith(
      { tokenRateLimit: 2, tokenRateWindowMs: 60_000 },
      true,
    ));
    const statuses = async (token: string, count: number) => {
      const seen = [];
      for (let request = 0; request < count; request += 1)
        seen.push(await answer(`${url}/routes/plain`, `Bearer ${token}`));
      return seen;
    };
    const clientA = await statuses('token-a', 3);
    expect(clientA.map(({ status }) => status)).toEqual([200, 200, 429]);
    expect(clientA[2]).toMatchObject({
      status: 429,
      body: { error: 429, message: 'Too many requests; retry later.' },
    });
    expect(Number(clientA[2].retryAfter)).toBeGreaterThanOrEqual(1);
    // Counted by client, not by address: another token from the same address is served.
    expect((await statuses('token-b', 2)).map(({ status }) => status)).toEqual([
      200, 200,
    ]);
    // Public routes are not counted.
    expect((await answer(`${url}/routes/public`)).status).toBe(200);
  });

  it('does not limit tokens at tokenRateLimit 0', async () => {
    let url: string;
    ({ app, url } = await appWith({ tokenRateLimit: 0 }, true));
    const seen = [];
    for (let request = 0; request < 12; request += 1)
      seen.push((await answer(`${url}/routes/plain`, 'Bearer token-a')).status);
    expect(seen).toEqual(Array.from({ length: 12 }, () => 200));
  });
});
