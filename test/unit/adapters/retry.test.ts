import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { RequestThrottled } from '@aws-sdk/client-sqs';
import {
  attempt,
  DEFAULT_RETRY_POLICY,
  isRetryable,
  isRetryableEntry,
  mayHaveApplied,
  untilProcessed,
  withRetries,
} from '../../../lib/adapters/retry.js';
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
    await expect(withRetries(() => Promise.reject(failure), standaloneDeadline(5_000), fastPolicy)).rejects.toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      cause: failure,
    });
  });

  it('shares one retry budget across all the calls of a request', async () => {
    const deadline = requestDeadline({ now: Date.now(), remainingMs: 5_000, reserveMs: 0, retryBudget: 3 });
    let calls = 0;
    const failing = () => {
      calls++;
      return Promise.reject(throttled());
    };
    await expect(
      Promise.all([withRetries(failing, deadline, fastPolicy), withRetries(failing, deadline, fastPolicy)]),
    ).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    await new Promise((r) => setTimeout(r, 50));
    // Two first attempts plus at most the three retries of the shared budget.
    expect(calls).toBeLessThanOrEqual(5);
    expect(deadline.retries.left).toBe(0);
  });

  it('starts no call once the deadline has passed, and cancels one in flight when it passes', async () => {
    let calls = 0;
    await expect(withRetries(async () => ++calls, standaloneDeadline(0), fastPolicy)).rejects.toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
    });
    expect(calls).toBe(0);
    const deadline = requestDeadline({ now: Date.now(), remainingMs: 30, reserveMs: 0, retryBudget: 50 });
    const stalled = withRetries(
      ({ abortSignal }) =>
        new Promise((_, reject) =>
          abortSignal.addEventListener('abort', () => reject(Object.assign(new Error('aborted'), { name: 'AbortError' }))),
        ),
      deadline,
      fastPolicy,
    );
    await expect(stalled).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
  });

  it('retries SQS throttling a queue call (RequestThrottled, a 400 blamed on the client) as it retries DynamoDB throttling a table call, and knows it did nothing', async () => {
    const sqsThrottled = () => new RequestThrottled({ message: 'Rate exceeded', $metadata: { httpStatusCode: 400 } });
    expect(isRetryable(sqsThrottled())).toBe(true);
    expect(mayHaveApplied(sqsThrottled())).toBe(false);
    let calls = 0;
    const answer = await withRetries(
      async () => (++calls < 3 ? Promise.reject(sqsThrottled()) : 'sent'),
      standaloneDeadline(5_000),
      fastPolicy,
    );
    expect({ answer, calls }).toEqual({ answer: 'sent', calls: 3 });
  });

  it('retries the network failing under a call, as the HTTP handler passes it on (a plain Error with a code), and knows one that failed before connecting did nothing', () => {
    const network = (code: string) => Object.assign(new Error(`connect ${code} dynamodb.eu-west-2.amazonaws.com`), { code });
    for (const code of ['ENOTFOUND', 'EAI_AGAIN', 'ECONNREFUSED']) {
      expect({ code, retryable: isRetryable(network(code)), applied: mayHaveApplied(network(code)) }).toEqual({
        code,
        retryable: true,
        applied: false,
      });
    }
    // Unreachable on the connect call itself: never sent. The same codes on a keep-alive socket that carried the
    // request (a write or read failing) may come after it was applied.
    for (const code of ['EHOSTUNREACH', 'ENETUNREACH']) {
      expect(isRetryable(network(code))).toBe(true);
      expect(mayHaveApplied(Object.assign(network(code), { syscall: 'connect' }))).toBe(false);
      expect(mayHaveApplied(Object.assign(network(code), { syscall: 'write' }))).toBe(true);
    }
    // Once connected, the request may have been applied with only its answer lost.
    for (const code of ['ECONNRESET', 'ECONNABORTED', 'ETIMEDOUT', 'EPIPE'])
      expect({ code, retryable: isRetryable(network(code)), applied: mayHaveApplied(network(code)) }).toEqual({
        code,
        retryable: true,
        applied: true,
      });
  });

  it("sends a batch entry again when SQS blames itself or throttled it, and not when it blames the sender's entry", () => {
    expect(isRetryableEntry({ Code: 'InternalError', SenderFault: false })).toBe(true);
    expect(isRetryableEntry({ Code: 'RequestThrottled', SenderFault: true })).toBe(true);
    expect(isRetryableEntry({ Code: 'InvalidParameterValue', SenderFault: true })).toBe(false);
    expect(isRetryableEntry({ SenderFault: true })).toBe(false);
  });

  it('retries a cancelled transaction only when every reason given is transient', () => {
    const cancelled = (...codes: string[]) =>
      new TransactionCanceledException({ message: 'cancelled', $metadata: {}, CancellationReasons: codes.map((Code) => ({ Code })) });
    expect(isRetryable(cancelled('None', 'TransactionConflict', 'None'))).toBe(true);
    expect(isRetryable(cancelled('ThrottlingError', 'None'))).toBe(true);
    // One action refused for good cancels the same transaction every time.
    expect(isRetryable(cancelled('TransactionConflict', 'ValidationError'))).toBe(false);
    expect(isRetryable(cancelled('None', 'ConditionalCheckFailed'))).toBe(false);
    expect(isRetryable(cancelled('None', 'None'))).toBe(false);
  });

  it('retries a single-item write refused because a transaction was writing the same item, and knows it did nothing', () => {
    const conflict = Object.assign(new Error('ongoing transaction'), {
      name: 'TransactionConflictException',
      $metadata: { httpStatusCode: 400 },
    });
    expect(isRetryable(conflict)).toBe(true);
    expect(mayHaveApplied(conflict)).toBe(false);
  });

  it('tells a write that may still land (timeout, 5xx, abort, in progress) from one storage refused', () => {
    expect(mayHaveApplied(Object.assign(new Error('timed out'), { name: 'TimeoutError' }))).toBe(true);
    expect(mayHaveApplied(Object.assign(new Error('boom'), { name: 'InternalServerError', $metadata: { httpStatusCode: 500 } }))).toBe(
      true,
    );
    expect(mayHaveApplied(Object.assign(new Error('aborted'), { name: 'AbortError' }))).toBe(true);
    expect(
      mayHaveApplied(Object.assign(new Error('ongoing'), { name: 'TransactionInProgressException', $metadata: { httpStatusCode: 400 } })),
    ).toBe(true);
    expect(mayHaveApplied(throttled())).toBe(false);
    expect(
      mayHaveApplied(
        new TransactionCanceledException({ message: 'cancelled', $metadata: { httpStatusCode: 400 }, CancellationReasons: [] }),
      ),
    ).toBe(false);
  });

  it('keeps an attempt in doubt through later refusals, until an answer the caller names settles it', async () => {
    const timeout = Object.assign(new Error('timed out'), { name: 'TimeoutError' });
    const settling = Object.assign(new Error('settled'), { name: 'Settled', $metadata: { httpStatusCode: 400 } });
    let calls = 0;
    const thenThrottled = await attempt(() => Promise.reject(++calls === 1 ? timeout : throttled()), standaloneDeadline(5_000), fastPolicy);
    expect(thenThrottled).toMatchObject({ ok: false, attempts: DEFAULT_RETRY_POLICY.maxAttempts, answered: false, inDoubt: true });
    calls = 0;
    const thenSettled = await attempt(() => Promise.reject(++calls === 1 ? timeout : settling), standaloneDeadline(5_000), fastPolicy, {
      settles: (e) => e === settling,
    });
    expect(thenSettled).toMatchObject({ ok: false, attempts: 2, answered: true, inDoubt: false, error: settling });
  });

  it('asks again only for the keys a batch call left unprocessed, and reports those it never could', async () => {
    const asked: string[][] = [];
    const done = await untilProcessed(
      ['a', 'b', 'c'],
      (keys) => (asked.push([...keys]), Promise.resolve(keys.length > 1 ? keys.slice(1) : [])),
      standaloneDeadline(5_000),
      fastPolicy,
    );
    expect({ asked, done }).toEqual({ asked: [['a', 'b', 'c'], ['b', 'c'], ['c']], done: { unprocessed: [] } });
    const shedding = await untilProcessed(['a', 'b'], (keys) => Promise.resolve(keys), standaloneDeadline(5_000), fastPolicy);
    expect(shedding).toEqual({ unprocessed: ['a', 'b'] });
  });
});

describe("a request's deadline", () => {
  it('keeps the second half of the clean-up span for the Idempotency-Key: verifying writes ends halfway', () => {
    const deadline = requestDeadline({ now: 1_000_000, remainingMs: 10_000, reserveMs: 2_000, retryBudget: 50 });
    expect(deadline.workBy).toBe(1_008_000);
    expect(deadline.forVerification().workBy).toBe(1_008_750);
    expect(deadline.forCleanUp().workBy).toBe(1_009_500);
    expect(deadline.forVerification().forCleanUp().workBy).toBe(1_009_500);
  });
});
