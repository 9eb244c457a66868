import type { TestProject } from 'vitest/node';
import { startTestPostgres } from './test-postgres.js';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
  }
}

/**
 * One PostgreSQL for the whole e2e run: the one at DATABASE_URL if set (its database name
 * must contain "test", since the suite writes to it), else a fresh embedded server.
 */
export default async function setup(
  project: TestProject,
): Promise<() => Promise<void>> {
  const external = process.env.DATABASE_URL;
  if (external !== undefined && external !== '') {
    const database = new URL(external).pathname.slice(1);
    if (!database.includes('test')) {
      throw new Error(
        `Refusing to run the e2e suite on database "${database}": its name must contain "test".`,
      );
    }
    project.provide('databaseUrl', external);
    return async () => {};
  }
  const postgres = await startTestPostgres('e2e');
  project.provide('databaseUrl', postgres.url);
  return () => postgres.stop();
}
