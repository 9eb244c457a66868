import { Controller, Get } from '@nestjs/common';
import {
  ApiOkResponse,
  ApiOperation,
  ApiProperty,
  ApiTags,
} from '@nestjs/swagger';
import { HealthCheckService, TypeOrmHealthIndicator } from '@nestjs/terminus';
import { Public } from '../auth/public.decorator.js';
import { ApiError } from '../errors/api-error.js';
import { ApiErrorResponses } from '../errors/api-error-responses.decorator.js';
import { ShutdownState } from '../lifecycle/shutdown-state.js';

// A probe must answer well inside a kubelet's default 1 s probe timeout.
const DATABASE_PING_TIMEOUT_MS = 800;

export class HealthStatus {
  @ApiProperty({ type: 'string', enum: ['ok'] })
  status: 'ok';
}

const notReady = (reason: string): ApiError =>
  ApiError.serviceUnavailable(`The service is not ready: ${reason}.`);

/** Probes for orchestrators and load balancers: public, cheap, no token. */
@ApiTags('health')
@Public()
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly database: TypeOrmHealthIndicator,
    private readonly shutdown: ShutdownState,
  ) {}

  @Get('live')
  @ApiOperation({
    operationId: 'live',
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
    description:
      'The service can take traffic: its database answers and it is not shutting down. ' +
      'GET /health answers the same.',
    security: [],
  })
  @ApiOkResponse({ type: HealthStatus, description: 'ready for traffic' })
  @ApiErrorResponses(503)
  async ready(): Promise<HealthStatus> {
    if (this.shutdown.isShuttingDown) throw notReady('it is shutting down');
    const result = await this.health
      .check([
        () =>
          this.database.pingCheck('database', {
            timeout: DATABASE_PING_TIMEOUT_MS,
          }),
      ])
      .catch(() => undefined);
    if (result === undefined) throw notReady('the database is unavailable');
    return { status: 'ok' };
  }
}
