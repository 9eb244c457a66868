import { ConfigModule } from '@nestjs/config';
import { environmentConfig } from './environment.js';

/** Settings come from the process environment only (no .env file is read implicitly). */
export const AppConfigModule = ConfigModule.forRoot({
  isGlobal: true,
  ignoreEnvFile: true,
  load: [environmentConfig],
});
