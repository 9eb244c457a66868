import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsStorableText,
  STORABLE_TEXT_PATTERN,
} from '../../field-rules/storable-text.js';

const TEXT_RULE =
  ': well-formed Unicode text (no lone surrogate) without NUL characters.';

/** The spec's Plant (section 2.1): what the service answers with, never the id. */
export class Plant {
  @ApiProperty({
    type: 'string',
    description: `The name of the plant${TEXT_RULE}`,
    pattern: STORABLE_TEXT_PATTERN,
  })
  @IsStorableText()
  name: string;

  @ApiPropertyOptional({
    type: 'string',
    description: `Tag that specifies the type${TEXT_RULE}`,
    pattern: STORABLE_TEXT_PATTERN,
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
