import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { JsonBodyGuard } from '../request-body/json-body.guard.js';
import { JsonBodyReader } from '../request-body/json-body.reader.js';
import { DatabaseHealthModule } from '../database/database-health.module.js';
import { MetricsModule } from '../metrics/metrics.module.js';
import { PlantEntity } from './plant.entity.js';
import { settingsProvider } from '../common/module-options.js';
import {
  ConfigurablePlantsModule,
  PLANTS_MODULE_OPTIONS,
  PlantsSettings,
} from './plants-module.options.js';
import { PlantsController } from './plants.controller.js';
import { PlantsMethodsController } from './plants-methods.controller.js';
import { PlantsRepository } from './plants.repository.js';
import { PlantsService } from './plants.service.js';

/**
 * POST /plants and PlantsService over the host's TypeORM connection, configured with
 * forRoot(options?) or forRootAsync({ imports, inject, useFactory }). Everything the route
 * needs comes with it (its body reader, validation pipe and exception filter are bound to
 * the controller), and nothing is installed on the application: the host's other routes
 * answer and validate as they did. Who may call it is AuthModule's business.
 */
@Module({
  imports: [
    TypeOrmModule.forFeature([PlantEntity]),
    DatabaseHealthModule,
    MetricsModule,
  ],
  // In this order: the create first, then the 405 answer to the other methods.
  controllers: [PlantsController, PlantsMethodsController],
  providers: [
    settingsProvider(PlantsSettings, PLANTS_MODULE_OPTIONS),
    {
      provide: JsonBodyReader,
      inject: [PlantsSettings],
      useFactory: (settings: PlantsSettings) =>
        new JsonBodyReader(settings.bodyLimit),
    },
    JsonBodyGuard,
    PlantsService,
    PlantsRepository,
  ],
  exports: [PlantsService],
})
export class PlantsModule extends ConfigurablePlantsModule {}
