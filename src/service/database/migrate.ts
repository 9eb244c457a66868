import { Logger, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppConfigModule } from '../config/config.module.js';
import { validateEnvironment } from '../config/environment.js';
import { databaseConnection } from './database.module.js';

// Migrates at boot, at once (not in the background as the service does), so a Job cannot succeed without it.
@Module({ imports: [databaseConnection({ migrate: true })] })
class MigrationModule {}

/** `npm run migration:run`: migrate DATABASE_URL (or the embedded database) and exit. */
async function migrate(): Promise<void> {
  const environment = validateEnvironment(process.env);
  const context = await NestFactory.createApplicationContext(
    {
      module: MigrationModule,
      imports: [AppConfigModule.forRoot(environment)],
    },
    {
      abortOnError: false,
      logger: ['fatal', 'error', 'warn', 'log'],
    },
  );
  await context.close();
  new Logger('Migrations').log('The schema is up to date.');
}

migrate().catch((error: unknown) => {
  new Logger('Migrations').error(
    error instanceof Error ? error.message : String(error),
  );
  process.exit(1);
});
