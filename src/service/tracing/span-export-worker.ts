// The export worker's entry (WorkerSpanExporter starts it).
import { parentPort, workerData } from 'node:worker_threads';
import {
  answerSpanExports,
  type ExportPort,
  otlpHttpSender,
} from './answer-span-exports.js';
import type { OtlpTarget } from './worker-span-exporter.js';

answerSpanExports(
  parentPort as ExportPort,
  otlpHttpSender(workerData as OtlpTarget),
);
