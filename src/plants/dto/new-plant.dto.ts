import { ApiProperty } from '@nestjs/swagger';
import { IsInt64 } from '../validation/int64.js';
import { Plant } from './plant.dto.js';

/** The spec's NewPlant (section 2.2): every field of Plant, plus the id. */
export class NewPlant extends Plant {
  @ApiProperty({
    type: 'integer',
    format: 'int64',
    description: 'Identification number of the plant',
    example: 42,
  })
  @IsInt64()
  id: bigint;
}
