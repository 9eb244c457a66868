import { ConcurrencyLimit } from './concurrency-limit.js';

describe('ConcurrencyLimit', () => {
  it('runs at most its limit at a time, the others in arrival order', async () => {
    const limit = new ConcurrencyLimit(2);
    const started: number[] = [];
    const releases = new Map<number, () => void>();
    const tasks = [0, 1, 2, 3].map((index) =>
      limit.run(async () => {
        started.push(index);
        await new Promise<void>((resolve) => releases.set(index, resolve));
        return index;
      }),
    );
    await vi.waitFor(() => expect(started).toEqual([0, 1]));
    expect(limit.inFlight).toBe(2);
    releases.get(1)?.();
    await vi.waitFor(() => expect(started).toEqual([0, 1, 2]));
    releases.get(0)?.();
    await vi.waitFor(() => expect(started).toEqual([0, 1, 2, 3]));
    expect(limit.inFlight).toBe(2);
    releases.get(2)?.();
    releases.get(3)?.();
    await expect(Promise.all(tasks)).resolves.toEqual([0, 1, 2, 3]);
    expect(limit.inFlight).toBe(0);
  });

  it('frees the slot of a task that fails', async () => {
    const limit = new ConcurrencyLimit(1);
    await expect(
      limit.run(() => Promise.reject(new Error('down'))),
    ).rejects.toThrow('down');
    await expect(limit.run(() => Promise.resolve('next'))).resolves.toBe(
      'next',
    );
    expect(limit.inFlight).toBe(0);
  });
});
