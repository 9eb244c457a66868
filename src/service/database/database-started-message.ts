/**
 * Logged once per process as it turns ready. Its own file: the test kit counts
 * WEB_CONCURRENCY workers by it without loading the service.
 */
export const DATABASE_STARTED_MESSAGE = 'Database migrated and connected';
