import { Controller, Get } from '@nestjs/common';
import {
  ApiOkResponse,
  ApiOperation,
  ApiProperty,
  ApiTags,
} from '@nestjs/swagger';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Public } from '../auth/public.decorator.js';
import { ApiError } from '../errors/api-error.js';
import { ApiErrorResponses } from '../errors/api-error-responses.decorator.js';

export class HealthStatus {
  @ApiProperty({ type: 'string', enum: ['ok'] })
  status: 'ok';
}

@ApiTags('health')
@Controller('health')
export class HealthController {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  @Get()
  @Public()
  @ApiOperation({
    operationId: 'health',
    description: 'Whether the service can reach its database. Needs no token.',
    security: [],
  })
  @ApiOkResponse({ type: HealthStatus, description: 'the database answers' })
  @ApiErrorResponses(503)
  async check(): Promise<HealthStatus> {
    try {
      await this.dataSource.query('SELECT 1');
    } catch {
      throw ApiError.databaseUnavailable();
    }
    return { status: 'ok' };
  }
}
