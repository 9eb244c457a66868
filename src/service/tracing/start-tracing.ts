import { readTracingSettings } from '../config/tracing-settings.js';

let stop: (() => Promise<void>) | undefined;

/** Starts the SDK, if asked, before the application loads: instrumentations patch http and pg at require. */
export async function startTracing(
  env: Record<string, string | undefined>,
): Promise<void> {
  const { settings } = readTracingSettings(env);
  if (settings === undefined) return;
  const { startTracingSdk } = await import('./tracing-sdk.js');
  stop = startTracingSdk(settings);
}

/** Whether this process runs an SDK: the log lines then carry trace and span ids. */
export function tracingStarted(): boolean {
  return stop !== undefined;
}

/** Exports what was recorded and stops the SDK; nothing to do when none was started. */
export async function stopTracing(): Promise<void> {
  const stopping = stop;
  stop = undefined;
  await stopping?.();
}
