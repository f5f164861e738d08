import { mapAtMost } from '../../lib/map-at-most.js';

describe('mapAtMost: work over many items with a bounded number running at once', () => {
  it('never runs more than the limit at once, and answers every result in the items’ order', async () => {
    let running = 0;
    let most = 0;
    const results = await mapAtMost([30, 10, 20, 5, 15], 2, async (ms, i) => {
      most = Math.max(most, ++running);
      await new Promise((resolve) => setTimeout(resolve, ms));
      running--;
      return `${i}:${ms}`;
    });
    expect(most).toBe(2);
    expect(results).toEqual(['0:30', '1:10', '2:20', '3:5', '4:15']);
  });

  it('goes on with the other items when one fails, then throws the first failure', async () => {
    const done: number[] = [];
    await expect(
      mapAtMost([1, 2, 3, 4], 2, async (n) => {
        if (n === 2) throw new Error('second failed');
        if (n === 3) throw new Error('third failed');
        done.push(n);
      }),
    ).rejects.toThrow('second failed');
    expect(done.sort()).toEqual([1, 4]);
  });

  it('answers an empty list at once', async () => {
    await expect(mapAtMost([], 2, async () => 1)).resolves.toEqual([]);
  });

  it('refuses a limit that is not a whole number of at least 1, rather than running nothing or one at a time', async () => {
    for (const limit of [0, -1, 1.5, Number.NaN]) {
      await expect(mapAtMost([1], limit, async (n) => n)).rejects.toThrow(RangeError);
    }
    await expect(mapAtMost([1, 2, 3], Number.POSITIVE_INFINITY, async (n) => n * 2)).resolves.toEqual([2, 4, 6]);
  });
});
