import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DatabaseHealthModule } from '../database/database-health.module.js';
import { JsonBodyModule } from '../http/json-body.module.js';
import { MetricsModule } from '../metrics/metrics.module.js';
import { PlantEntity } from './plant.entity.js';
import { PlantsController } from './plants.controller.js';
import { CreateAdmission } from './create-admission.js';
import { PlantsRepository } from './plants.repository.js';
import { PlantsService } from './plants.service.js';

@Module({
  imports: [
    TypeOrmModule.forFeature([PlantEntity]),
    DatabaseHealthModule,
    MetricsModule,
    JsonBodyModule,
  ],
  controllers: [PlantsController],
  providers: [PlantsService, PlantsRepository, CreateAdmission],
  exports: [PlantsService],
})
export class PlantsModule {}
