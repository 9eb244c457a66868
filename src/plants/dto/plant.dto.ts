import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsStorableText } from '../validation/storable-text.js';

/** The spec's Plant (section 2.1): what the service answers with, never the id. */
export class Plant {
  @ApiProperty({ type: 'string', description: 'The name of the plant' })
  @IsStorableText()
  name: string;

  @ApiPropertyOptional({
    type: 'string',
    description: 'Tag that specifies the type',
  })
  @IsStorableText({ optional: true })
  tag?: string;

  /** The answer for a stored row: `tag` is left out, not null, when there is none. */
  static of(name: string, tag: string | null | undefined): Plant {
    const plant = new Plant();
    plant.name = name;
    if (tag !== null && tag !== undefined) plant.tag = tag;
    return plant;
  }
}
