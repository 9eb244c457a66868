import type { NestApplicationOptions } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import { RawBodyCheck } from './raw-body.check.js';

/** A host's application, with Nest's body parser as the options set it, checked at init. */
async function initWith(
  options: NestApplicationOptions,
  jsonLimit?: number,
): Promise<void> {
  const moduleRef = await Test.createTestingModule({
    providers: [RawBodyCheck],
  }).compile();
  const app = moduleRef.createNestApplication<NestExpressApplication>({
    logger: false,
    ...options,
  });
  if (jsonLimit !== undefined) app.useBodyParser('json', { limit: jsonLimit });
  try {
    await app.init();
  } finally {
    await app.close();
  }
}

describe("RawBodyCheck, at a host application's start", () => {
  it('refuses to start behind a JSON parser that does not keep the raw body, saying what to do', async () => {
    await expect(initWith({})).rejects.toThrow(
      'PlantsModule: this application parses JSON bodies without keeping them raw, so a ' +
        'plant id beyond 2^53 would arrive rounded. Create it with ' +
        'NestFactory.create(AppModule, { rawBody: true }), or with bodyParser: false.',
    );
  });

  it("fails to start with the parser's own error when the parser cannot read a body of two bytes", async () => {
    await expect(initWith({ rawBody: true }, 1)).rejects.toThrow(
      'request entity too large',
    );
  });

  it.each([
    ['a parser that keeps the raw body', { rawBody: true }],
    ['no body parser', { bodyParser: false }],
  ])('starts with %s', async (_case, options) => {
    await expect(initWith(options)).resolves.toBeUndefined();
  });
});
