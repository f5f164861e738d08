import {
  BatchTooLargeError,
  IdempotencyKeyReusedError,
  InsufficientScopeError,
  InvalidRequestError,
  UnauthenticatedError,
} from '../../../lib/errors.js';
import { InternalError, problemResponse, toCodedError } from '../../../lib/http/problem-details.js';
import { presentedKey } from '../../../lib/http/authenticate.js';

const body = (r: { body: string }) => JSON.parse(r.body) as Record<string, unknown>;

describe('problem details', () => {
  it('carry type, title, status, detail, a stable code and the request id', () => {
    const res = problemResponse(new UnauthenticatedError(), 'req-1');
    expect(res.statusCode).toBe(401);
    expect(res.headers).toMatchObject({ 'Content-Type': 'application/problem+json', 'WWW-Authenticate': expect.stringMatching(/^Bearer/) });
    expect(body(res)).toEqual({
      type: '/problems/unauthenticated',
      title: 'Unauthenticated',
      status: 401,
      detail: expect.any(String),
      code: 'UNAUTHENTICATED',
      requestId: 'req-1',
    });
  });

  it('map each error class to its status and code', () => {
    const cases: [Error, number, string][] = [
      [new InsufficientScopeError('cases:read'), 403, 'INSUFFICIENT_SCOPE'],
      [new InvalidRequestError('bad', [{ field: 'x', message: 'y' }]), 400, 'INVALID_REQUEST'],
      [new BatchTooLargeError(101, 100), 400, 'BATCH_TOO_LARGE'],
      [new IdempotencyKeyReusedError({ state: 'IN_PROGRESS', sameRequest: true, retryAfterSeconds: 7 }), 409, 'IDEMPOTENCY_KEY_REUSED'],
      [new InternalError(), 500, 'INTERNAL'],
    ];
    for (const [error, status, code] of cases) {
      const res = problemResponse(toCodedError(error), 'r');
      expect([res.statusCode, body(res).code]).toEqual([status, code]);
    }
  });

  it('never expose an unexpected error: it becomes a bare INTERNAL without message or stack', () => {
    const secret = new Error('ConditionalCheckFailed on table prod-cases-7 at /var/task/index.js:1');
    const res = problemResponse(toCodedError(secret), 'r');
    expect(res.statusCode).toBe(500);
    expect(res.body).not.toMatch(/prod-cases|var\/task|stack|ConditionalCheck/);
  });

  it('tell an in-progress 409 to retry later and a completed one what was created', () => {
    const inProgress = problemResponse(
      new IdempotencyKeyReusedError({ state: 'IN_PROGRESS', sameRequest: true, retryAfterSeconds: 7 }),
      'r',
    );
    expect(inProgress.headers?.['Retry-After']).toBeDefined();
    expect(body(inProgress)).toMatchObject({ state: 'IN_PROGRESS' });
    const done = problemResponse(
      new IdempotencyKeyReusedError({ state: 'COMPLETED', sameRequest: false, original: { created: [{ index: 0 }], rejected: [] } }),
      'r',
    );
    expect(body(done)).toMatchObject({ state: 'COMPLETED', created: [{ index: 0 }], rejected: [] });
    expect(done.headers?.['Retry-After']).toBeUndefined();
  });

  it('map a malformed JSON body from the middy parser to INVALID_REQUEST', () => {
    const parserError = Object.assign(new Error('Invalid or malformed JSON was provided'), {
      cause: { package: '@middy/http-json-body-parser' },
    });
    expect(toCodedError(parserError).code).toBe('INVALID_REQUEST');
  });
});

describe('reading the presented key', () => {
  const ev = (headers: Record<string, string>) => ({ headers, multiValueHeaders: {} });
  it('accepts the Bearer scheme in any case and X-Api-Key', () => {
    expect(presentedKey(ev({ Authorization: 'Bearer k1' }))).toBe('k1');
    expect(presentedKey(ev({ authorization: 'bearer   k1 ' }))).toBe('k1');
    expect(presentedKey(ev({ 'X-API-KEY': 'k2' }))).toBe('k2');
  });
  it('refuses other schemes, empty values and two different keys', () => {
    expect(presentedKey(ev({ Authorization: 'Basic k1' }))).toBeUndefined();
    expect(presentedKey(ev({ Authorization: 'Bearer' }))).toBeUndefined();
    expect(presentedKey(ev({ Authorization: 'Bearer a b' }))).toBeUndefined();
    expect(presentedKey(ev({ 'x-api-key': '  ' }))).toBeUndefined();
    expect(presentedKey(ev({ Authorization: 'Bearer k1', 'X-Api-Key': 'k2' }))).toBeUndefined();
    expect(presentedKey(ev({ Authorization: 'Bearer k1', 'X-Api-Key': 'k1' }))).toBe('k1');
  });
  it('refuses a header sent twice', () => {
    expect(presentedKey({ headers: {}, multiValueHeaders: { Authorization: ['Bearer a', 'Bearer a'] } })).toBeUndefined();
  });
});
