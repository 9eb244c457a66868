import {
  Controller,
  Get,
  HttpStatus,
  RequestMethod,
  Res,
} from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import {
  ApiError,
  MetricsService,
  Public,
  READ_METHODS,
  refuseOtherMethods,
} from '../../lib/index.js';
import { type Environment, InjectEnvironment } from '../config/environment.js';

/** GET /metrics on the API port, unless turned off or moved to METRICS_PORT. */
@ApiExcludeController()
@Public()
@Controller('metrics')
export class MetricsController {
  constructor(
    private readonly metrics: MetricsService,
    @InjectEnvironment() private readonly env: Environment,
  ) {}

  @Get()
  async scrape(
    // Express's response and Fastify's reply both set the type so.
    @Res({ passthrough: true })
    response: { type(contentType: string): unknown },
  ): Promise<string> {
    this.refuseWhenNotServedHere();
    const { contentType, body } = await this.metrics.render();
    response.type(contentType);
    return body;
  }

  /** Another method is 405 with Allow, where /metrics is served at all. */
  rejectOtherMethods(): never {
    this.refuseWhenNotServedHere();
    throw ApiError.methodNotAllowed(READ_METHODS);
  }

  private refuseWhenNotServedHere(): void {
    if (!this.env.METRICS_ENABLED || this.env.METRICS_PORT !== undefined) {
      throw new ApiError(HttpStatus.NOT_FOUND);
    }
  }
}

refuseOtherMethods(MetricsController, 'rejectOtherMethods', [
  RequestMethod.GET,
]);
