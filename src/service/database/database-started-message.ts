/** Logged once per process as it turns ready; its own file, for the test kit to count workers by. */
export const DATABASE_STARTED_MESSAGE = 'Database migrated and connected';
