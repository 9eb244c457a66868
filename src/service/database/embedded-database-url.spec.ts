import * as embedded from './embedded-database-url.js';

describe('the embedded cluster’s address', () => {
  it('is on loopback, as postgres, with the password encoded for a URL', () => {
    const url = new URL(embedded.embeddedDatabaseUrl('p@ss/w:rd %', 15432));
    expect(url.hostname).toBe('127.0.0.1');
    expect(url.port).toBe('15432');
    expect(url.username).toBe('postgres');
    expect(decodeURIComponent(url.password)).toBe('p@ss/w:rd %');
    expect(url.pathname).toBe('/plant_store');
    expect(embedded.EMBEDDED_DATABASE_NAME).toBe('plant_store');
  });

  it('names another database when asked', () => {
    expect(embedded.embeddedDatabaseUrl('x', 1, 'postgres')).toBe(
      'postgresql://postgres:x@127.0.0.1:1/postgres',
    );
  });

  it('keeps the password in the data folder', () => {
    expect(embedded.embeddedPasswordFile('/data')).toBe(
      '/data/postgres-password',
    );
  });
});
