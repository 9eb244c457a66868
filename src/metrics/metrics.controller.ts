import { Controller, Get, HttpStatus, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { Public } from '../auth/public.decorator.js';
import { type Environment, InjectEnvironment } from '../config/environment.js';
import { ApiError } from '../errors/api-error.js';
import { MetricsService } from './metrics.service.js';

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
    @Res({ passthrough: true }) response: Response,
  ): Promise<string> {
    if (!this.env.METRICS_ENABLED || this.env.METRICS_PORT !== undefined) {
      throw new ApiError(HttpStatus.NOT_FOUND);
    }
    const { contentType, body } = await this.metrics.render();
    response.type(contentType);
    return body;
  }
}
