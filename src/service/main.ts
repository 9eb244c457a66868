// The entry point: `node dist/service/main.js`, however it is started. Only the Node.js version's
// check (an older Node is refused before anything else loads) and the V8 flags' check are
// imported statically: a process that lacks them starts over with them (v8-flags.ts), and
// everything it had loaded would be loaded again.
import { refuseUnsupportedNode } from './node-version.js';
import { runWithServiceV8Flags } from './v8-flags.js';

refuseUnsupportedNode();
runWithServiceV8Flags();
// OpenTelemetry's SDK, when configured, before anything it instruments is loaded.
const { startTracing } = await import('./tracing/start-tracing.js');
await startTracing(process.env);
const { startService } = await import('./bootstrap.js');
startService();
