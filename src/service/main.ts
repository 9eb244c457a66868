// The entry point. Only the Node version and V8 flags checks load statically: a process
// lacking the flags starts over (v8-flags.ts), reloading everything.
import { refuseUnsupportedNode } from './node-version.js';
import { runWithServiceV8Flags } from './v8-flags.js';

refuseUnsupportedNode();
runWithServiceV8Flags();
// OpenTelemetry's SDK, when configured, before anything it instruments is loaded.
const { startTracing } = await import('./tracing/start-tracing.js');
await startTracing(process.env);
const { startService } = await import('./bootstrap.js');
startService();
