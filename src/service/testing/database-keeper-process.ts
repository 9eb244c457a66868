import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import type { KeeperOrders } from './database-keeper.js';

/** The line startPlantStore writes to the keeper once its store is ready. */
export const SERVING = 'serving';

const KEEPER = fileURLToPath(new URL('./database-keeper.js', import.meta.url));

/** startPlantStore's side of a store's keeper (database-keeper.ts). */
export class KeeperProcess {
  /** Resolves once the store's PostgreSQL is ready; rejects with what it printed otherwise. */
  readonly ready: Promise<void>;
  private readonly child: ChildProcess;

  constructor(orders: KeeperOrders) {
    // Detached: a terminal's Ctrl+C or a signal to the runner's group leaves it to clean up.
    this.child = spawn(process.execPath, [KEEPER, JSON.stringify(orders)], {
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let output = '';
    this.ready = new Promise<void>((resolve, reject) => {
      this.child.stdout?.on('data', (chunk: Buffer) => {
        output += chunk.toString('utf8');
        for (const line of output.split('\n').slice(0, -1)) {
          const message = JSON.parse(line) as { ready?: true; failed?: string };
          if (message.ready === true) resolve();
          if (message.failed !== undefined)
            reject(
              new Error(
                `The store's PostgreSQL did not start:\n${message.failed}`,
              ),
            );
        }
      });
      this.child.stderr?.on(
        'data',
        (chunk: Buffer) => (output += chunk.toString('utf8')),
      );
      this.child.once('exit', (code) =>
        reject(new Error(`The store's keeper exited (${code}):\n${output}`)),
      );
    });
    // Rejections are read by the start; this one only keeps an early exit from going unhandled.
    this.ready.catch(() => undefined);
    // The runner is not held open by it: its exit closes the pipe, which the keeper reads.
    this.child.unref();
    for (const stream of [
      this.child.stdin,
      this.child.stdout,
      this.child.stderr,
    ])
      (stream as unknown as { unref?: () => void } | null)?.unref?.();
  }

  /** The service it waits for, once its pipe closes, before stopping the database. */
  watch(pid: number): void {
    this.child.stdin?.write(`${pid}\n`);
  }

  /** The store is ready: the keeper may now copy a spare cluster for the next start. */
  serving(): void {
    this.child.stdin?.write(`${SERVING}\n`);
  }

  /** Its pipe closed: the keeper stops the database, removes the folder and exits. */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = once(this.child, 'exit');
    // Held open again until it has gone: the caller waits for this.
    this.child.ref();
    this.child.stdin?.end();
    await exited;
  }
}
