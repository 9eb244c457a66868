import { ApiProperty, ApiSchema } from '@nestjs/swagger';

/** The spec's Error (section 2.3): the body of every answer other than 200. */
@ApiSchema({ name: 'Error' })
export class ErrorBody {
  @ApiProperty({
    type: 'integer',
    format: 'int32',
    description: 'The HTTP status code of the answer',
    example: 400,
  })
  error: number;

  @ApiProperty({
    type: 'string',
    description: 'One readable sentence saying what went wrong',
    example:
      'id must be an integer between -9223372036854775808 and 9223372036854775807.',
  })
  message: string;

  constructor(error: number, message: string) {
    this.error = error;
    this.message = message;
  }
}
