import { ApiProperty } from '@nestjs/swagger';
import { IsInt64 } from '../../field-rules/int64.js';
import { Plant } from './plant.dto.js';

/** The spec's NewPlant (section 2.2): every field of Plant, plus the id. */
export class NewPlant extends Plant {
  @ApiProperty({
    type: 'integer',
    format: 'int64',
    description:
      'Identification number of the plant: any int64, kept exactly. Clients generated from ' +
      'this document for JavaScript (openapi-typescript, openapi-generator) type it as a ' +
      'number, which silently rounds integers above 2^53 (9007199254740992). To send such an ' +
      'id, write it as a JSON integer literal, never a string: for example ' +
      '`JSON.rawJSON("9223372036854775807")` in place of the number (JSON.stringify copies ' +
      'it as is), or a serializer for 64-bit integers such as lossless-json.',
    example: 42,
  })
  @IsInt64()
  id: bigint;
}
