import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DEFAULT_RETRY_POLICY, withRetries } from '../../../lib/adapters/retry.js';
import { requestDeadline, standaloneDeadline } from '../../../lib/deadline.js';

const throttled = () => Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException', $metadata: { httpStatusCode: 400 } });
const fastPolicy = { ...DEFAULT_RETRY_POLICY, baseDelayMs: 1, maxDelayMs: 2 };

describe('the one retry layer', () => {
  it('retries a transient failure and returns the answer', async () => {
    let calls = 0;
    const answer = await withRetries(async () => (++calls < 3 ? Promise.reject(throttled()) : 'ok'), standaloneDeadline(5_000), fastPolicy);
    expect({ answer, calls }).toEqual({ answer: 'ok', calls: 3 });
  });

  it('passes an answer through unchanged, even one that arrives after the deadline', async () => {
    const deadline = requestDeadline({ now: Date.now(), remainingMs: 30, reserveMs: 0, retryBudget: 50 });
    const conditionFailed = new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {} });
    const late = withRetries(() => new Promise((_, reject) => setTimeout(() => reject(conditionFailed), 60)), deadline, fastPolicy);
    await expect(late).rejects.toBe(conditionFailed);
  });

  it('gives up as unavailable when the attempts run out, naming the last failure', async () => {
    const failure = throttled();
    await expect(withRetries(() => Promise.reject(failure), standaloneDeadline(5_000), fastPolicy)).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE', cause: failure });
  });

  it('shares one retry budget across all the calls of a request', async () => {
    const deadline = requestDeadline({ now: Date.now(), remainingMs: 5_000, reserveMs: 0, retryBudget: 3 });
    let calls = 0;
    const failing = () => {
      calls++;
      return Promise.reject(throttled());
    };
    await expect(Promise.all([withRetries(failing, deadline, fastPolicy), withRetries(failing, deadline, fastPolicy)])).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    await new Promise((r) => setTimeout(r, 50));
    // Two first attempts plus at most the three retries of the shared budget.
    expect(calls).toBeLessThanOrEqual(5);
    expect(deadline.retries.left).toBe(0);
  });

  it('starts no call once the deadline has passed, and cancels one in flight when it passes', async () => {
    let calls = 0;
    await expect(withRetries(async () => ++calls, standaloneDeadline(0), fastPolicy)).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    expect(calls).toBe(0);
    const deadline = requestDeadline({ now: Date.now(), remainingMs: 30, reserveMs: 0, retryBudget: 50 });
    const stalled = withRetries(
      ({ abortSignal }) =>
        new Promise((_, reject) => abortSignal.addEventListener('abort', () => reject(Object.assign(new Error('aborted'), { name: 'AbortError' })))),
      deadline,
      fastPolicy,
    );
    await expect(stalled).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
  });
});
