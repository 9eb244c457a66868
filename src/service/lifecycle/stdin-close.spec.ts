import { PassThrough } from 'node:stream';
import { Logger } from '@nestjs/common';
import { stopWhenStdinCloses } from './stdin-close.js';

/** The context Nest writes beside a line: the name a class gave its Logger. */
const contextOf = (logger: Logger): unknown =>
  (logger as unknown as { context?: string }).context;

describe('stopWhenStdinCloses (STOP_WHEN_STDIN_CLOSES)', () => {
  let stdin: PassThrough;
  let signals: [number, string | number | undefined][];
  let warnings: unknown[][];

  beforeEach(() => {
    stdin = new PassThrough();
    vi.spyOn(process, 'stdin', 'get').mockReturnValue(
      stdin as unknown as typeof process.stdin,
    );
    signals = [];
    vi.spyOn(process, 'kill').mockImplementation((pid, signal) => {
      signals.push([pid, signal]);
      return true;
    });
    warnings = [];
    vi.spyOn(Logger.prototype, 'warn').mockImplementation(function (
      this: Logger,
      ...args: unknown[]
    ) {
      warnings.push([contextOf(this), ...args]);
    });
  });
  afterEach(() => {
    vi.restoreAllMocks();
    stdin.destroy();
  });

  const WARNING =
    'Standard input closed (the process that started the service is gone): stopping as on SIGTERM';

  it('reads and drops what the parent writes, and stops the process as on SIGTERM once the pipe ends', async () => {
    stopWhenStdinCloses();
    expect(stdin.readableFlowing).toBe(true);
    stdin.write('anything\n');
    await new Promise((resolve) => setImmediate(resolve));
    expect(stdin.readableLength).toBe(0);
    expect(signals).toEqual([]);

    stdin.end();
    await new Promise((resolve) => stdin.once('end', resolve));
    expect(signals).toEqual([[process.pid, 'SIGTERM']]);
    expect(warnings).toEqual([['Lifecycle', WARNING]]);
  });

  it('stops the process as on SIGTERM when the pipe fails', () => {
    stopWhenStdinCloses();
    stdin.emit('error', new Error('EPIPE'));
    expect(signals).toEqual([[process.pid, 'SIGTERM']]);
    expect(warnings).toEqual([['Lifecycle', WARNING]]);
  });
});
