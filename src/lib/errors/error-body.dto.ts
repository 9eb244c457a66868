import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { int64Rule } from '../field-rules/int64.js';
import { defaultMessage } from './api-error.js';

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
    // The answer to a NewPlant with a bad id, as the validation pipe words it.
    example: `${int64Rule('id')}.`,
  })
  message: string;

  constructor(error: number, message: string) {
    this.error = error;
    this.message = message;
  }

  /** The catalogue's answer for a status, for code that writes a response by hand. */
  static forStatus(status: number): ErrorBody {
    return new ErrorBody(status, defaultMessage(status));
  }
}
