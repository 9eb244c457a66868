import { percentile, percentiles } from './percentile.mjs';

const oneToHundred = Array.from({ length: 100 }, (_, index) => index + 1);

describe('percentile (nearest rank)', () => {
  it('is the smallest value with at least that share of the values at or below it', () => {
    expect(percentile(oneToHundred, 0.5)).toBe(50);
    expect(percentile(oneToHundred, 0.99)).toBe(99);
    expect(percentile(oneToHundred, 0.995)).toBe(100);
    expect(percentile(oneToHundred, 0.07)).toBe(7);
    expect(percentile(oneToHundred, 0.071)).toBe(8);
  });

  it('takes the next value up when the rank falls between two', () => {
    expect(percentile([10, 20, 30], 0.5)).toBe(20);
    expect(percentile([10, 20, 30, 40], 0.5)).toBe(20);
    expect(percentile([10, 20, 30, 40], 0.51)).toBe(30);
    const thousand = Array.from({ length: 1000 }, (_, index) => index + 1);
    expect(percentile(thousand, 0.999)).toBe(999);
    expect(percentile(thousand, 0.9991)).toBe(1000);
  });

  it('clamps to the smallest and the largest value', () => {
    expect(percentile([3, 1, 2], 0)).toBe(1);
    expect(percentile([3, 1, 2], 1)).toBe(3);
    expect(percentile([3, 1, 2], 1.5)).toBe(3);
    expect(percentile([7], 0.99)).toBe(7);
  });

  it('sorts by value, not as text, and leaves its input as it was', () => {
    const values = [100, 9, 20, 3];
    expect(percentile(values, 0.25)).toBe(3);
    expect(percentile(values, 0.75)).toBe(20);
    expect(values).toEqual([100, 9, 20, 3]);
  });

  it('counts Infinity (a request never answered) as the slowest', () => {
    expect(percentile([1, Infinity, 2, 3], 1)).toBe(Infinity);
    expect(percentile([1, Infinity, 2, 3], 0.75)).toBe(3);
  });

  it('is NaN for no values', () => {
    expect(percentile([], 0.5)).toBeNaN();
  });

  it('gives several at once by the same rule', () => {
    const shuffled = [...oneToHundred].reverse();
    expect(percentiles(shuffled, [0.5, 0.99, 0.999])).toEqual([50, 99, 100]);
    expect(percentiles(Float64Array.from(shuffled), [0.07])).toEqual([7]);
  });
});
