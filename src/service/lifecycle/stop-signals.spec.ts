import { handleStopSignals } from './stop-signals.js';
import { captureNestLogs } from '../../../test/support/nest-logs.js';

const AGAIN = (signal: string) =>
  `${signal} received again: already stopping, carrying on`;
const HURRYING =
  'SIGINT received again: skipping the rest of the drain, then closing the database';

describe('handleStopSignals', () => {
  // The unit specs share a process: a library an earlier spec loaded may listen to these
  // signals too (signal-exit, through testcontainers' lock file, re-sends a signal it thinks
  // it is the last to hear, which ends the process). This spec owns them while it emits them.
  const SIGNALS = ['SIGINT', 'SIGTERM'] as const;
  let others: Map<string, NodeJS.SignalsListener[]>;
  beforeAll(() => {
    others = new Map(
      SIGNALS.map((signal) => [signal, process.listeners(signal)]),
    );
    for (const signal of SIGNALS) process.removeAllListeners(signal);
  });
  afterAll(() => {
    for (const signal of SIGNALS)
      for (const listener of others.get(signal) ?? [])
        process.on(signal, listener);
  });

  let release: () => void;
  const stop = vi.fn();
  const hurry = vi.fn();
  /** What it logged, by level, all as 'Signals'. */
  let logged: [string, unknown][];
  let contexts: Set<unknown>;

  beforeEach(() => {
    ({ logged, contexts } = captureNestLogs(['log', 'warn']));
    vi.useFakeTimers({ toFake: ['Date'] });
    stop.mockReset();
    hurry.mockReset();
    release = handleStopSignals({ stop, hurry });
  });
  afterEach(() => {
    release();
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  it('stops on the first signal only: a repeated SIGTERM changes nothing', () => {
    process.emit('SIGTERM', 'SIGTERM');
    process.emit('SIGTERM', 'SIGTERM');
    vi.advanceTimersByTime(5_000);
    process.emit('SIGTERM', 'SIGTERM');
    expect(stop.mock.calls).toEqual([['SIGTERM']]);
    expect(hurry).not.toHaveBeenCalled();
    expect(logged).toEqual([
      ['log', AGAIN('SIGTERM')],
      ['log', AGAIN('SIGTERM')],
    ]);
  });

  it('counts copies of one Ctrl+C as one, and a later press as a request to hurry', () => {
    process.emit('SIGINT', 'SIGINT');
    process.emit('SIGINT', 'SIGINT');
    process.emit('SIGINT', 'SIGINT');
    expect(stop.mock.calls).toEqual([['SIGINT']]);
    expect(hurry).not.toHaveBeenCalled();

    vi.advanceTimersByTime(999);
    process.emit('SIGINT', 'SIGINT');
    expect(hurry).not.toHaveBeenCalled();

    vi.advanceTimersByTime(1);
    process.emit('SIGINT', 'SIGINT');
    expect(hurry).toHaveBeenCalledTimes(1);
    expect(stop).toHaveBeenCalledTimes(1);
    expect(logged).toEqual([
      ['log', AGAIN('SIGINT')],
      ['log', AGAIN('SIGINT')],
      ['log', AGAIN('SIGINT')],
      ['warn', HURRYING],
    ]);
  });

  it('hurries on a SIGINT after a SIGTERM, never on a SIGTERM after a SIGINT', () => {
    process.emit('SIGINT', 'SIGINT');
    vi.advanceTimersByTime(2_000);
    process.emit('SIGTERM', 'SIGTERM');
    expect(hurry).not.toHaveBeenCalled();
    process.emit('SIGINT', 'SIGINT');
    expect(hurry).toHaveBeenCalledTimes(1);
    expect(logged).toEqual([
      ['log', AGAIN('SIGTERM')],
      ['warn', HURRYING],
    ]);
    expect([...contexts]).toEqual(['Signals']);
  });

  it('hears neither signal once released', () => {
    release();
    process.emit('SIGTERM', 'SIGTERM');
    process.emit('SIGINT', 'SIGINT');
    expect(stop).not.toHaveBeenCalled();
  });
});
