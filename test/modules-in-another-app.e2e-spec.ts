import { Controller, Get, Module, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { inject } from 'vitest';
import { AuthModule } from '../src/auth/auth.module.js';
import { AppConfigModule } from '../src/config/config.module.js';
import { validateEnvironment } from '../src/config/environment.js';
import { MIGRATIONS } from '../src/database/migrations/index.js';
import { ApiErrorsModule } from '../src/errors/api-errors.module.js';
import { NewPlant } from '../src/plants/dto/new-plant.dto.js';
import { PlantsModule } from '../src/plants/plants.module.js';
import { PlantsService } from '../src/plants/plants.service.js';
import {
  errorBody,
  newPlantJson,
  postPlant,
  send,
  uniqueId,
} from './support/http.js';
import { createScratchDatabase } from './support/scratch-database.js';
import { storedPlant } from './support/stored-plants.js';
import { TOKEN } from './support/tokens.js';

/** A route of the host's own, to show what AuthModule's guard means for it. */
@Controller('host')
class HostController {
  @Get()
  greet(): { host: string } {
    return { host: 'another team' };
  }
}

/**
 * Another team's root module, as the README's "Using the modules in your own application"
 * writes it: its own TypeORM connection (this project's migrations), the validated settings,
 * and the modules it wants. Nothing from the service's own AppModule or createApp.
 */
function hostModule(databaseUrl: string): Type {
  @Module({
    imports: [
      AppConfigModule.forRoot(
        validateEnvironment({ API_TOKENS: TOKEN, LOG_LEVEL: 'fatal' }),
      ),
      TypeOrmModule.forRoot({
        type: 'postgres',
        url: databaseUrl,
        autoLoadEntities: true,
        migrations: MIGRATIONS,
        migrationsRun: true,
      }),
      ApiErrorsModule,
      AuthModule,
      PlantsModule,
    ],
    controllers: [HostController],
  })
  class HostAppModule {}
  return HostAppModule;
}

describe('PlantsModule and AuthModule in another application', () => {
  let app: NestExpressApplication;
  let url: string;
  let dataSource: DataSource;

  beforeAll(async () => {
    const databaseUrl = await createScratchDatabase(
      inject('databaseUrl'),
      'host',
    );
    app = await NestFactory.create<NestExpressApplication>(
      hostModule(databaseUrl),
      { bodyParser: false, logger: false, abortOnError: false },
    );
    await app.listen(0, '127.0.0.1');
    url = await app.getUrl();
    dataSource = app.get(DataSource);
  });
  afterAll(() => app?.close());

  it('creates plants through PlantsService, in the host database its migrations made', async () => {
    const id = uniqueId();
    const plant = await app
      .get(PlantsService)
      .create(
        Object.assign(new NewPlant(), { id, name: 'Fern', tag: 'shade' }),
      );

    expect(plant).toEqual({ name: 'Fern', tag: 'shade' });
    expect(await storedPlant(dataSource, id)).toEqual({
      id: id.toString(),
      name: 'Fern',
      tag: 'shade',
    });
  });

  it('creates plants through POST /plants with a bearer token', async () => {
    const id = uniqueId();
    const answer = await postPlant(url, newPlantJson(id, 'Monstera'));

    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ name: 'Monstera' });
    expect(await storedPlant(dataSource, id)).toEqual({
      id: id.toString(),
      name: 'Monstera',
      tag: null,
    });
  });

  it('answers with the same Error bodies: 401 without a token, 400 for a bad NewPlant', async () => {
    const unauthenticated = await postPlant(
      url,
      newPlantJson(uniqueId(), 'Fern'),
      { token: null },
    );
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.body).toEqual(errorBody(401));

    const invalid = await postPlant(url, '{"id": "12", "name": "Fern"}');
    expect(invalid.status).toBe(400);
    expect(invalid.body).toEqual(errorBody(400));
  });

  it("guards the host's own routes too: AuthModule's guard is global", async () => {
    expect((await send(`${url}/host`)).status).toBe(401);
    const greeted = await send(`${url}/host`, {
      headers: { Authorization: `Bearer ${TOKEN}` },
    });
    expect(greeted.status).toBe(200);
    expect(greeted.body).toEqual({ host: 'another team' });
  });
});
