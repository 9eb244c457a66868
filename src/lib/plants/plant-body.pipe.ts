import {
  type ArgumentMetadata,
  Injectable,
  type PipeTransform,
} from '@nestjs/common';
import {
  createValidationPipe,
  type DtoValidationPipe,
} from '../validation-pipe/validation.pipe.js';
import { PlantsSettings } from './plants-module.options.js';

/** Validates a create's body against the module's `newPlant`: NewPlant or a host's subclass. */
@Injectable()
export class PlantBodyPipe implements PipeTransform {
  private readonly pipe: DtoValidationPipe;

  constructor(settings: PlantsSettings) {
    this.pipe = createValidationPipe(settings.newPlant);
  }

  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    return this.pipe.transform(value, metadata);
  }
}
