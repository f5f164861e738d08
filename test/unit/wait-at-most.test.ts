import { waitAtMost } from '../../lib/wait-at-most.js';

const after = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

describe('waiting for work at most so long', () => {
  it('answers true for work done in time, false once the time runs out first, and waits for ever with no limit', async () => {
    expect(await waitAtMost(after(5), 500)).toBe(true);
    expect(await waitAtMost(new Promise(() => undefined), 20)).toBe(false);
    expect(await waitAtMost(after(20), undefined)).toBe(true);
  });

  it('passes on a failure that comes in time', async () => {
    await expect(waitAtMost(Promise.reject(new Error('refused')), 500)).rejects.toThrow('refused');
  });
});
