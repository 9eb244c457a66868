import {
  Controller,
  Get,
  Injectable,
  Module,
  Param,
  UseGuards,
} from '@nestjs/common';
import { EventEmitterModule, OnEvent } from '@nestjs/event-emitter';
import { AuthGuard, PassportStrategy } from '@nestjs/passport';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { MaxLength } from 'class-validator';
import { Strategy } from 'passport-http-bearer';
import pg from 'pg';
import { inject } from 'vitest';
import {
  type AuthenticatedClient,
  AuthModule,
  NewPlant,
  PLANT_CREATED,
  PLANT_STORE_MIGRATIONS,
  PlantCreatedEvent,
  PlantsModule,
  PlantsService,
  TokenVerifier,
} from '../src/lib/index.js';
import { HOST_ADAPTERS, type Host, startHost } from './support/host-app.js';
import { errorBody, expectErrorAnswer, send } from './support/http.js';
import { newPlantJson, postPlant, uniqueId } from './support/plants.js';
import { createScratchDatabase } from './support/scratch-database.js';
import { storedPlant } from './support/stored-plants.js';
import { TOKEN } from './support/tokens.js';

const HOST_KEY = 'host-own-key-0123456789';

/** A host's own bearer strategy under passport-http-bearer's default name, for its own routes. */
@Injectable()
class HostBearerStrategy extends PassportStrategy(Strategy, 'bearer') {
  validate(token: string): { host: true } | false {
    return token === HOST_KEY ? { host: true } : false;
  }
}

@Controller('host-area')
@UseGuards(AuthGuard('bearer'))
class HostAreaController {
  @Get()
  enter(): { entered: true } {
    return { entered: true };
  }
}

/** The host's own auth: its strategy and the route it guards. */
@Module({ providers: [HostBearerStrategy], controllers: [HostAreaController] })
class HostAuthModule {}

/** A host's read route over PlantsService, its string parameter passed straight in. */
@Controller('shop/plants')
class ShopPlantsController {
  constructor(private readonly plants: PlantsService) {}

  @Get(':id')
  async find(@Param('id') id: string): Promise<unknown> {
    return (await this.plants.findById(id)) ?? { found: false };
  }
}

/** A host's stricter NewPlant: NewPlant's rules, and one of its own on the name. */
class ShopNewPlant extends NewPlant {
  @MaxLength(20, { message: 'name must be at most 20 characters' })
  declare name: string;
}

describe('PlantsModule and AuthModule refuse a composition that would open a route (issue 30)', () => {
  it('PlantsModule without AuthModule does not start, and names AuthModule', async () => {
    await expect(startHost([PlantsModule.forRoot()])).rejects.toThrow(
      /PlantsModule: no AuthModule in this application.*Import AuthModule\.forRoot/,
    );
  });

  it('the bare PlantsModule class does not start, and says how to import it', async () => {
    // Nest aborts the process on a provider that cannot be made, unless told not to.
    await expect(
      startHost([PlantsModule, AuthModule.forRoot({ tokens: [TOKEN] })], {
        options: { abortOnError: false },
      }),
    ).rejects.toThrow(/import PlantsModule\.forRoot\(options\?\)/);
  });
});

describe.each([
  ["the host's module imported first", true],
  ["the host's module imported last", false],
])(
  "a host's own passport 'bearer' strategy beside AuthModule (%s)",
  (_order, hostFirst) => {
    let host: Host;
    beforeAll(async () => {
      const modules = [
        PlantsModule.forRoot(),
        AuthModule.forRoot({ tokens: [TOKEN] }),
      ];
      host = await startHost(
        hostFirst ? [HostAuthModule, ...modules] : [...modules, HostAuthModule],
      );
    });
    afterAll(() => host?.app.close());

    const enter = (token: string) =>
      send(`${host.url}/host-area`, {
        headers: { Authorization: `Bearer ${token}` },
      });

    it("keeps the host's key on the host's route, and a plant token opens none of it", async () => {
      expect((await enter(HOST_KEY)).status).toBe(200);
      expect((await enter(TOKEN)).status).toBe(401);
    });

    it("keeps the plant route to plant tokens: the host's key is 401 there", async () => {
      const id = uniqueId();
      expect(
        (
          await postPlant(host.url, newPlantJson(id, 'Fern'), {
            token: HOST_KEY,
          })
        ).status,
      ).toBe(401);
      expect((await postPlant(host.url, newPlantJson(id, 'Fern'))).status).toBe(
        200,
      );
    });
  },
);

describe('the modules on a named connection of the host (dataSource)', () => {
  let host: Host;
  let plantsDatabase: string;
  beforeAll(async () => {
    plantsDatabase = await createScratchDatabase(
      inject('databaseUrl'),
      'named',
    );
    host = await startHost([
      TypeOrmModule.forRoot({
        name: 'plants',
        type: 'postgres',
        url: plantsDatabase,
        autoLoadEntities: true,
        migrations: PLANT_STORE_MIGRATIONS,
        migrationsRun: true,
      }),
      PlantsModule.forRoot({ dataSource: 'plants' }),
      AuthModule.forRoot({ tokens: [TOKEN], dataSource: 'plants' }),
    ]);
  });
  afterAll(() => host?.app.close());

  it('stores plants in that connection, not in the default one', async () => {
    const id = uniqueId();
    const answer = await postPlant(host.url, newPlantJson(id, 'Fern'));
    expect(answer.status).toBe(200);
    const client = new pg.Client({ connectionString: plantsDatabase });
    await client.connect();
    try {
      const { rows } = await client.query(
        'SELECT id::text AS id, name FROM plants WHERE id = $1::bigint',
        [id.toString()],
      );
      expect(rows).toEqual([{ id: id.toString(), name: 'Fern' }]);
    } finally {
      await client.end();
    }
    expect(await storedPlant(host.dataSource, id)).toBeUndefined();
  });
});

/** Collects plant.created, and reads the row at the moment the event arrives. */
@Injectable()
class PlantCreatedListener {
  readonly received: { event: PlantCreatedEvent; storedThen: boolean }[] = [];
  private readonly pending: Promise<void>[] = [];
  databaseUrl = '';

  @OnEvent(PLANT_CREATED)
  onCreated(event: PlantCreatedEvent): void {
    // Recorded in the order the events came; whether another connection saw the row (only
    // once its insert has committed) is filled in when that check answers, in any order.
    const entry = { event, storedThen: false };
    this.received.push(entry);
    this.pending.push(
      committedRow(this.databaseUrl, event.id).then((storedThen) => {
        entry.storedThen = storedThen;
      }),
    );
  }

  settled(): Promise<void[]> {
    return Promise.all(this.pending);
  }
}

async function committedRow(databaseUrl: string, id: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query(
      'SELECT 1 FROM plants WHERE id = $1::bigint',
      [id],
    );
    return rows.length === 1;
  } finally {
    await client.end();
  }
}

describe.each(HOST_ADAPTERS)(
  'the seams: isGlobal, findById, plant.created, newPlant, path, on %s',
  (adapter) => {
    let host: Host;
    let listener: PlantCreatedListener;

    /** A host feature module that injects PlantsService without importing PlantsModule. */
    @Module({ controllers: [ShopPlantsController] })
    class ShopModule {}

    beforeAll(async () => {
      host = await startHost(
        [
          EventEmitterModule.forRoot(),
          PlantsModule.forRoot({
            isGlobal: true,
            newPlant: ShopNewPlant,
            path: 'garden/plants',
          }),
          AuthModule.forRoot({ tokens: [TOKEN] }),
          ShopModule,
        ],
        { own: { providers: [PlantCreatedListener] }, adapter },
      );
      listener = host.app.get(PlantCreatedListener);
      listener.databaseUrl = (host.dataSource.options as { url: string }).url;
    });
    afterAll(() => host?.app.close());

    const create = (json: string) => postPlant(`${host.url}/garden`, json);

    it('serves the create at its path, with its 405, and nothing at /plants', async () => {
      expect((await create(newPlantJson(uniqueId(), 'Fern'))).status).toBe(200);
      const wrongMethod = await send(`${host.url}/garden/plants`);
      expect(wrongMethod.status).toBe(405);
      expect(wrongMethod.headers.get('allow')).toBe('POST');
      expect(wrongMethod.body).toEqual(errorBody(405));
      expect(
        (await postPlant(host.url, newPlantJson(uniqueId(), 'Fern'))).status,
      ).toBe(404);
    });

    it("applies the host's NewPlant rules with its message, and NewPlant's own still", async () => {
      const tooLong = await create(
        newPlantJson(uniqueId(), 'A name far longer than twenty'),
      );
      expectErrorAnswer(tooLong, 400, 'name must be at most 20 characters.');
      const badId = await create('{"id": "12", "name": "Fern"}');
      expectErrorAnswer(
        badId,
        400,
        expect.stringMatching(/^id must be an integer from /),
      );
      // Issue 29 holds for a host's class too: a prototype key in an unknown object is ignored.
      const hostile = await create(
        `{"id": ${uniqueId()}, "name": "Fern", "x": {"constructor": []}}`,
      );
      expect(hostile.status).toBe(200);
    });

    it("finds a stored plant through the host's own route (PlantsService global), its id exact", async () => {
      const id = uniqueId();
      expect((await create(newPlantJson(id, 'Fern', 'shade'))).status).toBe(
        200,
      );
      const found = await send(`${host.url}/shop/plants/${id}`);
      expect(found.body).toEqual({
        id: id.toString(),
        name: 'Fern',
        tag: 'shade',
      });
      const plants = host.app.get(PlantsService);
      await expect(plants.findById(id)).resolves.toEqual({
        id: id.toString(),
        name: 'Fern',
        tag: 'shade',
      });
      for (const missing of [
        uniqueId().toString(),
        'abc',
        '1.5',
        '',
        `${2n ** 63n}`,
      ])
        await expect(
          plants.findById(missing),
          missing,
        ).resolves.toBeUndefined();
    });

    it('sends plant.created once per new plant, after its commit, and never for a replay or a 409', async () => {
      await listener.settled();
      const before = listener.received.length;
      const id = uniqueId();
      expect((await create(newPlantJson(id, 'Fern', 'shade'))).status).toBe(
        200,
      );
      expect((await create(newPlantJson(id, 'Fern', 'shade'))).status).toBe(
        200,
      );
      expect((await create(newPlantJson(id, 'Ivy'))).status).toBe(409);
      const untagged = uniqueId();
      expect((await create(newPlantJson(untagged, 'Moss'))).status).toBe(200);
      await listener.settled();
      expect(listener.received.slice(before)).toEqual([
        {
          event: expect.objectContaining({
            id: id.toString(),
            name: 'Fern',
            tag: 'shade',
          }),
          storedThen: true,
        },
        {
          event: expect.objectContaining({
            id: untagged.toString(),
            name: 'Moss',
          }),
          storedThen: true,
        },
      ]);
      expect(listener.received.at(-1)?.event.tag).toBeUndefined();
    });
  },
);

describe('PlantsService in a module of the host that imports the configured module (no isGlobal)', () => {
  it('injects PlantsService there, which reads what the route wrote', async () => {
    const plants = PlantsModule.forRoot();
    @Module({ imports: [plants], controllers: [ShopPlantsController] })
    class ShopFeatureModule {}
    const host = await startHost([
      plants,
      AuthModule.forRoot({ tokens: [TOKEN] }),
      ShopFeatureModule,
    ]);
    try {
      const id = uniqueId();
      expect((await postPlant(host.url, newPlantJson(id, 'Fern'))).status).toBe(
        200,
      );
      const found = await send(`${host.url}/shop/plants/${id}`);
      expect(found.body).toEqual({ id: id.toString(), name: 'Fern' });
    } finally {
      await host.app.close();
    }
  });
});

describe('PlantsModule configured twice in one application', () => {
  it('starts (each with its path), and both create plants', async () => {
    const host = await startHost([
      PlantsModule.forRoot(),
      PlantsModule.forRoot({ path: 'nursery/plants' }),
      AuthModule.forRoot({ tokens: [TOKEN] }),
    ]);
    try {
      expect(
        (await postPlant(host.url, newPlantJson(uniqueId(), 'Fern'))).status,
      ).toBe(200);
      expect(
        (
          await postPlant(
            `${host.url}/nursery`,
            newPlantJson(uniqueId(), 'Fern'),
          )
        ).status,
      ).toBe(200);
    } finally {
      await host.app.close();
    }
  });
});

/** A verifier for a unit test: one known token, nothing looked up. */
class TestTokenVerifier extends TokenVerifier {
  verify(token: string): Promise<AuthenticatedClient | undefined> {
    return Promise.resolve(token === TOKEN ? { name: 'test' } : undefined);
  }
}

describe("a host's unit test: the modules compiled without PostgreSQL, PlantsService overridden", () => {
  it('answers a create through the fake, with the route, guard and pipe as they are', async () => {
    const created: unknown[] = [];
    const fakePlants = {
      create: (plant: NewPlant) => {
        created.push(plant);
        return Promise.resolve({ name: plant.name });
      },
    };
    const moduleRef = await Test.createTestingModule({
      imports: [
        // A DataSource that is never initialized: no connection is opened.
        TypeOrmModule.forRoot({
          type: 'postgres',
          manualInitialization: true,
          autoLoadEntities: true,
        }),
        PlantsModule.forRoot(),
        AuthModule.forRoot({ tokenVerifier: TestTokenVerifier }),
      ],
    })
      .overrideProvider(PlantsService)
      .useValue(fakePlants)
      .compile();
    const app = moduleRef.createNestApplication({
      rawBody: true,
      logger: false,
    });
    await app.listen(0, '127.0.0.1');
    try {
      const url = await app.getUrl();
      const answer = await postPlant(
        url,
        '{"id": 9007199254740993, "name": "Fern"}',
      );
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ name: 'Fern' });
      expect(created).toEqual([
        Object.assign(new NewPlant(), { id: 9007199254740993n, name: 'Fern' }),
      ]);
      const refused = await postPlant(url, '{"id": 1, "name": "Fern"}', {
        token: 'not-the-test-token-012345',
      });
      expect(refused.status).toBe(401);
      expect(created).toHaveLength(1);
    } finally {
      await app.close();
    }
  });
});

describe("the create operation in a host's own Swagger document", () => {
  it('requires the bearerAuth scheme that addBearerAuth(undefined, "bearerAuth") defines', async () => {
    const host = await startHost([
      PlantsModule.forRoot(),
      AuthModule.forRoot({ tokens: [TOKEN] }),
    ]);
    try {
      const document = SwaggerModule.createDocument(
        host.app,
        new DocumentBuilder()
          .setTitle('Shop')
          .addBearerAuth(undefined, 'bearerAuth')
          .build(),
      );
      const create = document.paths['/plants']?.post;
      expect(create?.security).toEqual([{ bearerAuth: [] }]);
      for (const requirement of create?.security ?? [])
        for (const scheme of Object.keys(requirement))
          expect(document.components?.securitySchemes).toHaveProperty(scheme);
    } finally {
      await host.app.close();
    }
  });
});
