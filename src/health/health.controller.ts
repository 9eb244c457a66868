import { Controller, Get } from '@nestjs/common';
import {
  ApiOkResponse,
  ApiOperation,
  ApiProperty,
  ApiTags,
} from '@nestjs/swagger';
import { TokenVerifier } from '../auth/token-verifier.js';
import { Public } from '../auth/public.decorator.js';
import { ApiError } from '../errors/api-error.js';
import { ApiErrorResponses } from '../errors/api-error-responses.decorator.js';
import { ShutdownState } from '../lifecycle/shutdown-state.js';
import { DatabaseHealth } from '../database/database-health.js';

export class HealthStatus {
  @ApiProperty({ type: 'string', enum: ['ok'] })
  status: 'ok';
}

/** Probes for orchestrators and load balancers: public, cheap, no token. */
@ApiTags('health')
@Public()
@Controller('health')
export class HealthController {
  constructor(
    private readonly database: DatabaseHealth,
    private readonly shutdown: ShutdownState,
    private readonly tokens: TokenVerifier,
  ) {}

  @Get('live')
  @ApiOperation({
    operationId: 'live',
    summary: 'Liveness probe',
    description:
      'The process answers. Touches nothing else, so a slow database never restarts it.',
    security: [],
  })
  @ApiOkResponse({ type: HealthStatus, description: 'the process is alive' })
  live(): HealthStatus {
    return { status: 'ok' };
  }

  @Get(['ready', ''])
  @ApiOperation({
    operationId: 'ready',
    summary: 'Readiness probe',
    description:
      'The service can take traffic: its database can commit, its managed tokens are ' +
      'current and it is not shutting down. ' +
      'GET /health answers the same.',
    security: [],
  })
  @ApiOkResponse({ type: HealthStatus, description: 'ready for traffic' })
  @ApiErrorResponses(503)
  async ready(): Promise<HealthStatus> {
    if (this.shutdown.isShuttingDown)
      throw ApiError.serviceUnavailable(
        'The service is not ready: it is shutting down.',
      );
    if (!this.tokens.isReady())
      throw ApiError.serviceUnavailable(
        'The service is not ready: its managed tokens are out of date.',
      );
    // A database that cannot commit: its error becomes 503 in the exception filter.
    await this.database.check();
    return { status: 'ok' };
  }
}
