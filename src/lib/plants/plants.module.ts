import {
  ConfigurableModuleBuilder,
  type DynamicModule,
  Inject,
  Injectable,
  Module,
  Optional,
} from '@nestjs/common';
import { getRepositoryToken, TypeOrmModule } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import {
  buildConfigurableModule,
  settingsProvider,
} from '../dynamic-modules/module-options.js';
import { WriteCircuit } from '../database/write-circuit.js';
import { WriteCircuitModule } from '../database/write-circuit.module.js';
import { MetricsModule } from '../metrics/metrics.module.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { JsonBodyGuard } from '../request-body/json-body.guard.js';
import { JsonBodyReader } from '../request-body/json-body.reader.js';
import { RawBodyCheck } from '../request-body/raw-body.check.js';
import { PlantEntity } from './plant.entity.js';
import { PlantEvents } from './plant-events.js';
import { PlantRoutes, routedAt } from './plant-routes.js';
import {
  type PlantsModuleExtras,
  type PlantsModuleOptions,
  PlantsSettings,
} from './plants-module.options.js';
import { PlantsAuthCheck } from './plants-auth.check.js';
import { PlantsController } from './plants.controller.js';
import { PlantsMethodsController } from './plants-methods.controller.js';
import { PLANTS_PATH } from './plants-path.js';
import { PlantsRepository } from './plants.repository.js';
import { PlantsService } from './plants.service.js';

/** Present in a module forRoot or forRootAsync made; absent when the bare class is imported. */
const CONFIGURED = Symbol('PlantsModule configured');

/** A bare `imports: [PlantsModule]` has no route, no connection and no options: said at start. */
@Injectable()
class ConfiguredCheck {
  constructor(@Optional() @Inject(CONFIGURED) configured?: true) {
    if (configured !== true)
      throw new Error(
        'PlantsModule: import PlantsModule.forRoot(options?) or ' +
          'PlantsModule.forRootAsync(...), not the PlantsModule class. To use PlantsService ' +
          'in another module, import there the module forRoot returned, or pass isGlobal: true.',
      );
  }
}

/** What the extras decide: the connection, the route's path, the scope. */
function partsFor(
  definition: DynamicModule,
  { isGlobal = false, dataSource, path = PLANTS_PATH }: PlantsModuleExtras,
): DynamicModule {
  // In this order: the create first, then the 405 answer to the other methods.
  const create = routedAt(PlantsController, path);
  const otherMethods = routedAt(PlantsMethodsController, path);
  return {
    ...definition,
    global: isGlobal,
    imports: [
      ...(definition.imports ?? []),
      TypeOrmModule.forFeature([PlantEntity], dataSource),
      WriteCircuitModule.forDataSource(dataSource),
      MetricsModule,
    ],
    controllers: [create, otherMethods],
    providers: [
      ...(definition.providers ?? []),
      { provide: CONFIGURED, useValue: true },
      settingsProvider(PlantsSettings, PLANTS_MODULE_OPTIONS),
      {
        provide: JsonBodyReader,
        inject: [PlantsSettings],
        useFactory: (settings: PlantsSettings) =>
          new JsonBodyReader(settings.bodyLimit),
      },
      JsonBodyGuard,
      {
        provide: PlantsRepository,
        inject: [
          getRepositoryToken(PlantEntity, dataSource),
          PlantsSettings,
          MetricsService,
          WriteCircuit,
        ],
        useFactory: (
          plants: Repository<PlantEntity>,
          settings: PlantsSettings,
          metrics: MetricsService,
          writeCircuit: WriteCircuit,
        ) => new PlantsRepository(plants, settings, metrics, writeCircuit),
      },
      PlantEvents,
      PlantsService,
      { provide: PlantRoutes, useValue: new PlantRoutes(create) },
      PlantsAuthCheck,
      RawBodyCheck,
    ],
    exports: [...(definition.exports ?? []), PlantsService, PlantRoutes],
  };
}

export const PLANTS_MODULE_OPTIONS = 'PLANTS_MODULE_OPTIONS';

const { ConfigurableModuleClass: ConfigurablePlantsModule } =
  buildConfigurableModule(
    new ConfigurableModuleBuilder<PlantsModuleOptions>({
      moduleName: 'Plants',
      optionsInjectionToken: PLANTS_MODULE_OPTIONS,
    }).setExtras<PlantsModuleExtras>(
      { isGlobal: false, dataSource: undefined, path: PLANTS_PATH },
      partsFor,
    ),
  );

/**
 * POST /plants and PlantsService over the host's TypeORM connection; installs nothing on the
 * application, and refuses to start without AuthModule or with a rounding JSON parser.
 */
@Module({ providers: [ConfiguredCheck] })
export class PlantsModule extends ConfigurablePlantsModule {}
