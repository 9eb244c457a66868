import { MessageChannel } from 'node:worker_threads';
import {
  answerSpanExports,
  type ExportPort,
  otlpHttpSender,
  type SerializedSpanExporter,
} from '../../src/service/tracing/answer-span-exports.js';
import type {
  ExportWorker,
  OtlpTarget,
} from '../../src/service/tracing/worker-span-exporter.js';

/**
 * The export worker's two ends in this thread (a channel, `answerSpanExports` on the far one):
 * under Vitest there is no built span-export-worker.js to start a thread from.
 */
export function exportWorkerInThisThread(
  sender: SerializedSpanExporter,
): ExportWorker {
  const { port1, port2 } = new MessageChannel();
  answerSpanExports(port2 as unknown as ExportPort, sender);
  const worker = port1 as unknown as ExportWorker;
  worker.terminate = () => {
    port1.close();
    port2.close();
    return Promise.resolve();
  };
  return worker;
}

/** The OTLP sender the worker would run, for `target`, in this thread. */
export const otlpWorkerInThisThread = (target: OtlpTarget): ExportWorker =>
  exportWorkerInThisThread(otlpHttpSender(target));
