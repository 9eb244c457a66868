import { randomUUID } from 'node:crypto';
import { Controller, Get, RequestMethod } from '@nestjs/common';
import {
  ApiExcludeEndpoint,
  ApiOkResponse,
  ApiOperation,
  ApiProperty,
  ApiTags,
} from '@nestjs/swagger';
import {
  ApiError,
  ApiErrorResponses,
  MetricsService,
  Public,
  READ_METHODS,
  refuseOtherMethods,
  TokenVerifier,
  WriteCircuit,
} from '../../lib/index.js';
import { ShutdownState } from '../lifecycle/shutdown-state.js';
import { type Environment, InjectEnvironment } from '../config/environment.js';
import { DatabaseStartup } from '../database/database-startup.js';

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

/** Probes for orchestrators, load balancers and monitoring: public, cheap, no token. */
@ApiTags('health')
@Public()
@Controller('health')
export class HealthController {
  private readonly instance: string;

  constructor(
    private readonly writeCircuit: WriteCircuit,
    private readonly shutdown: ShutdownState,
    private readonly tokens: TokenVerifier,
    private readonly database: DatabaseStartup,
    @InjectEnvironment() env: Environment,
    metrics: MetricsService,
  ) {
    this.instance = env.INSTANCE_ID ?? randomUUID();
    // What readiness no longer says, for dashboards and alerts.
    metrics.gauge(
      'database_can_commit',
      '1 unless the database is known not to commit now (creates are then refused at once, 503); 0 before it first answered',
      () => (database.isStarted && writeCircuit.canCommit ? 1 : 0),
    );
    metrics.gauge(
      'service_ready',
      '1 while GET /health/ready answers 200 (started, not shutting down)',
      () =>
        database.isStarted && tokens.isReady() && !shutdown.isShuttingDown
          ? 1
          : 0,
    );
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

  @Get('ready')
  @ApiOperation({
    operationId: 'ready',
    summary: 'Readiness probe',
    description:
      'The replica can take traffic: it has started (migrated, connected, its managed tokens ' +
      'loaded once) and is not shutting down. It does not ask the database: every replica ' +
      'shares it, and a balancer that removed them all during a database outage would answer ' +
      "in the service's place; while the database cannot commit, a ready replica answers " +
      'creates 503 with Retry-After. GET /health says whether the database commits.',
    security: [],
  })
  @ApiOkResponse({ type: HealthStatus, description: 'ready for traffic' })
  @ApiErrorResponses(503)
  ready(): HealthStatus {
    this.refuseUnlessStarted();
    return { status: 'ok', instance: this.instance };
  }

  @Get()
  @ApiOperation({
    operationId: 'health',
    summary: 'Health, for monitoring',
    description:
      'Ready (GET /health/ready), and besides: the database commits (a commit probe, ' +
      'reused for up to 1 s) and the managed tokens are current. For people and monitoring, ' +
      'not for a load balancer: a database outage turns it 503 on every replica at once.',
    security: [],
  })
  @ApiOkResponse({ type: HealthStatus, description: 'healthy' })
  @ApiErrorResponses(503)
  async health(): Promise<HealthStatus> {
    this.refuseUnlessStarted();
    if (!this.tokens.isCurrent())
      throw ApiError.serviceUnavailable(
        'The service is not healthy: its managed tokens are out of date.',
      );
    // A database that cannot commit: its error becomes 503 in the exception filter.
    await this.writeCircuit.check();
    return { status: 'ok', instance: this.instance };
  }

  private refuseUnlessStarted(): void {
    if (this.shutdown.isShuttingDown)
      throw ApiError.serviceUnavailable(
        'The service is not ready: it is shutting down.',
      );
    if (!this.database.isStarted)
      throw ApiError.serviceUnavailable(
        'The service is not ready: it is starting (its database has not answered yet).',
      );
    if (!this.tokens.isReady())
      throw ApiError.serviceUnavailable(
        'The service is not ready: its managed tokens are not loaded yet.',
      );
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
