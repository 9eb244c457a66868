import { randomUUID } from 'node:crypto';
import { Controller, Get, RequestMethod } from '@nestjs/common';
import {
  ApiExcludeEndpoint,
  ApiOkResponse,
  ApiOperation,
  ApiProperty,
  ApiTags,
} from '@nestjs/swagger';
import { TokenVerifier } from '../../lib/auth/token-verifier.js';
import { Public } from '../../lib/auth/public.decorator.js';
import { refuseOtherMethods } from '../../lib/common/other-methods.js';
import { ApiError, READ_METHODS } from '../../lib/errors/api-error.js';
import { ApiErrorResponses } from '../../lib/errors/api-error-responses.decorator.js';
import { ShutdownState } from '../lifecycle/shutdown-state.js';
import { WriteCircuit } from '../../lib/database/write-circuit.js';
import { type Environment, InjectEnvironment } from '../config/environment.js';

export class HealthStatus {
  @ApiProperty({ type: 'string', enum: ['ok'] })
  status: 'ok';

  @ApiProperty({
    type: 'string',
    description:
      'Which instance answers: INSTANCE_ID, or a random UUID per process. A test suite ' +
      'checks it to know it speaks to the service it started, not one left from a run before.',
  })
  instance: string;
}

/** Probes for orchestrators and load balancers: public, cheap, no token. */
@ApiTags('health')
@Public()
@Controller('health')
export class HealthController {
  private readonly instance: string;

  constructor(
    private readonly writeCircuit: WriteCircuit,
    private readonly shutdown: ShutdownState,
    private readonly tokens: TokenVerifier,
    @InjectEnvironment() env: Environment,
  ) {
    this.instance = env.INSTANCE_ID ?? randomUUID();
  }

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
    return { status: 'ok', instance: this.instance };
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
    await this.writeCircuit.check();
    return { status: 'ok', instance: this.instance };
  }

  /** Another method on a probe's path is 405 with Allow, as on /plants. */
  rejectOtherMethods(): never {
    throw ApiError.methodNotAllowed(READ_METHODS);
  }
}

refuseOtherMethods(
  HealthController,
  'rejectOtherMethods',
  [RequestMethod.GET],
  ['live', 'ready', ''],
  [ApiExcludeEndpoint()],
);
