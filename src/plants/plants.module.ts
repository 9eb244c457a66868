import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { PlantInsertBatcher } from './plant-insert.batcher.js';
import { PlantEntity } from './plant.entity.js';
import { PlantsController } from './plants.controller.js';
import { PlantsService } from './plants.service.js';

@Module({
  imports: [TypeOrmModule.forFeature([PlantEntity])],
  controllers: [PlantsController],
  providers: [PlantsService, PlantInsertBatcher],
  exports: [PlantsService],
})
export class PlantsModule {}
