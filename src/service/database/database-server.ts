import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { type Environment, InjectEnvironment } from '../config/environment.js';
import { EMBEDDED_DATABASE_NAME } from './embedded-database-url.js';
import { EmbeddedPostgresServer } from './embedded-postgres.js';

/** DATABASE_URL's server, or an embedded PostgreSQL stopped at shutdown after its last connection. */
@Injectable()
export class DatabaseServer implements OnApplicationShutdown {
  private readonly logger = new Logger('DatabaseServer');
  private embedded?: EmbeddedPostgresServer;

  constructor(@InjectEnvironment() private readonly env: Environment) {}

  async connectionUrl(): Promise<string> {
    if (this.env.DATABASE_URL !== undefined) return this.env.DATABASE_URL;
    this.embedded ??= await this.startEmbedded();
    return this.embedded.url;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.embedded?.stop();
    this.embedded = undefined;
  }

  private async startEmbedded(): Promise<EmbeddedPostgresServer> {
    const port = this.env.EMBEDDED_DATABASE_PORT;
    this.logger.log(
      `No DATABASE_URL: starting the embedded PostgreSQL on port ${port}`,
    );
    return EmbeddedPostgresServer.start({
      dataDir: this.env.DATA_DIR,
      port,
      database: EMBEDDED_DATABASE_NAME,
      onLog: (line) => this.logger.debug(line),
      onWarning: (line) => this.logger.warn(line),
    });
  }
}
