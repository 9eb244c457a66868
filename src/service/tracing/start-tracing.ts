import { readTracingSettings } from '../config/tracing-settings.js';

let stop: (() => Promise<void>) | undefined;

/**
 * Starts OpenTelemetry's SDK when the environment asks for it, before the application is
 * loaded: instrumentations patch http and pg as they are first required, so main.ts calls
 * this ahead of importing bootstrap.js. With no tracing variable set the SDK is never
 * imported. A refused setting starts nothing here: validateEnvironment refuses it next,
 * with the other settings, and the start stops.
 */
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
