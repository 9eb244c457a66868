import { handleStopSignals } from './stop-signals.js';

describe('handleStopSignals', () => {
  let release: () => void;
  const stop = vi.fn();
  const hurry = vi.fn();

  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
    stop.mockReset();
    hurry.mockReset();
    release = handleStopSignals({ stop, hurry });
  });
  afterEach(() => {
    release();
    vi.useRealTimers();
  });

  it('stops on the first signal only: a repeated SIGTERM changes nothing', () => {
    process.emit('SIGTERM', 'SIGTERM');
    process.emit('SIGTERM', 'SIGTERM');
    vi.advanceTimersByTime(5_000);
    process.emit('SIGTERM', 'SIGTERM');
    expect(stop.mock.calls).toEqual([['SIGTERM']]);
    expect(hurry).not.toHaveBeenCalled();
  });

  it('counts copies of one Ctrl+C as one, and a later press as a request to hurry', () => {
    process.emit('SIGINT', 'SIGINT');
    process.emit('SIGINT', 'SIGINT');
    process.emit('SIGINT', 'SIGINT');
    expect(stop.mock.calls).toEqual([['SIGINT']]);
    expect(hurry).not.toHaveBeenCalled();

    vi.advanceTimersByTime(1_000);
    process.emit('SIGINT', 'SIGINT');
    expect(hurry).toHaveBeenCalledTimes(1);
    expect(stop).toHaveBeenCalledTimes(1);
  });

  it('hurries on a SIGINT after a SIGTERM, never on a SIGTERM after a SIGINT', () => {
    process.emit('SIGINT', 'SIGINT');
    vi.advanceTimersByTime(2_000);
    process.emit('SIGTERM', 'SIGTERM');
    expect(hurry).not.toHaveBeenCalled();
    process.emit('SIGINT', 'SIGINT');
    expect(hurry).toHaveBeenCalledTimes(1);
  });
});
