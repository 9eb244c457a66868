import { join } from 'node:path';

/** The database the service creates in its embedded cluster. */
export const EMBEDDED_DATABASE_NAME = 'plant_store';

/** Where the embedded cluster's password is kept, in the data folder (mode 0600). */
export function embeddedPasswordFile(dataDir: string): string {
  return join(dataDir, 'postgres-password');
}

/** An embedded cluster's connection URL, the service's and plant-store/testing's. */
export function embeddedDatabaseUrl(
  password: string,
  port: number,
  database: string = EMBEDDED_DATABASE_NAME,
): string {
  return `postgresql://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;
}
