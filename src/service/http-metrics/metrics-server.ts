import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import {
  HttpStatus,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnApplicationShutdown,
} from '@nestjs/common';
import { type Environment, InjectEnvironment } from '../config/environment.js';
import { ErrorAnswer, MetricsService } from '../../lib/index.js';
import { refusedOtherThanRead } from '../http-server/read-only-path.js';

const NOT_FOUND = ErrorAnswer.forStatus(HttpStatus.NOT_FOUND);
const SCRAPE_FAILED = ErrorAnswer.forStatus(HttpStatus.INTERNAL_SERVER_ERROR);

/** With METRICS_PORT set, /metrics is served there (for a private scrape network) instead. */
@Injectable()
export class MetricsServer
  implements OnApplicationBootstrap, OnApplicationShutdown
{
  private readonly logger = new Logger('MetricsServer');
  private server?: Server;

  constructor(
    private readonly metrics: MetricsService,
    @InjectEnvironment() private readonly env: Environment,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!this.env.METRICS_ENABLED || this.env.METRICS_PORT === undefined)
      return;
    this.server = createServer((request, response) => {
      const isMetrics = request.url?.split('?')[0] === '/metrics';
      if (isMetrics && refusedOtherThanRead(request, response)) return;
      // Node leaves the body out of an answer to HEAD.
      if (isMetrics) {
        this.metrics.render().then(
          ({ contentType, body }) =>
            response.writeHead(200, { 'Content-Type': contentType }).end(body),
          (error: unknown) => {
            // As the exception filter does for the same failure on the API port.
            this.logger.error(
              'Unexpected error on GET /metrics',
              error instanceof Error ? error.stack : String(error),
            );
            SCRAPE_FAILED.writeTo(response);
          },
        );
        return;
      }
      NOT_FOUND.writeTo(response);
    });
    this.server.listen(this.env.METRICS_PORT, this.env.HOST);
    await once(this.server, 'listening');
    this.logger.log(`Metrics on port ${this.env.METRICS_PORT}`);
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.server === undefined) return;
    const closed = once(this.server, 'close');
    this.server.close();
    this.server.closeAllConnections();
    await closed;
  }
}
