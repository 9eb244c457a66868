/**
 * HTTP_ADAPTER as the test project sets it (vitest-projects.ts), for every service a spec
 * starts, as a process or in-process.
 */
export function adapterUnderTest(): { HTTP_ADAPTER?: string } {
  const adapter = process.env.HTTP_ADAPTER;
  return adapter === undefined ? {} : { HTTP_ADAPTER: adapter };
}
