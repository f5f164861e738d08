import { checkBatchSize } from '../cases/batch-size.js';
import { InvalidRequestError, unknownFieldErrors } from '../errors.js';
import { headerValues } from './headers.js';
import type { ApiEvent } from './types.js';

/**
 * Checks on the create request as a whole, made before anything is claimed or written: a 400
 * here creates nothing and does not consume the Idempotency-Key.
 */
export interface BatchEnvelope {
  cases: unknown[];
  idempotencyKey: string | undefined;
}

const VISIBLE_ASCII = /^[\x21-\x7e]{1,255}$/;

/**
 * Every header value `parseIdempotencyKey` accepts, in one pattern (for the API description):
 * the key itself (not in quotes), or its quoted form whose unescaped content is such a key.
 */
export const IDEMPOTENCY_KEY_PATTERN = /^(?:(?!".*"$)[\x21-\x7e]{1,255}|"(?:[\x21\x23-\x5b\x5d-\x7e]|\\["\\]){1,255}")$/;

/**
 * The Idempotency-Key header: 1–255 visible ASCII characters. The quoted structured-field form
 * of the IETF draft (`"abc"`) names the same key as `abc`.
 */
export function parseIdempotencyKey(event: Pick<ApiEvent, 'headers' | 'multiValueHeaders'>): string | undefined {
  const values = headerValues(event, 'idempotency-key');
  if (values.length === 0) return undefined;
  if (values.length > 1) throw new InvalidRequestError('Send the Idempotency-Key header at most once.');
  let key = values[0] as string;
  if (key.length >= 2 && key.startsWith('"') && key.endsWith('"')) {
    const inner = key.slice(1, -1);
    // sf-string: printable ASCII, with backslash escaping only `"` and `\\`.
    if (!/^(?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*$/.test(inner)) {
      throw new InvalidRequestError('Idempotency-Key is not a valid quoted string.');
    }
    key = inner.replace(/\\(["\\])/g, '$1');
  }
  if (!VISIBLE_ASCII.test(key)) {
    throw new InvalidRequestError('Idempotency-Key must be 1 to 255 visible ASCII characters (no spaces).', [
      { field: 'Idempotency-Key', message: 'must be 1 to 255 characters in the range 0x21-0x7E' },
    ]);
  }
  return key;
}

export function parseBatchEnvelope(event: ApiEvent): BatchEnvelope {
  const body = event.body as unknown as Record<string, unknown>;
  const unknownFields = Object.keys(body).filter((k) => k !== 'cases');
  if (!Object.hasOwn(body, 'cases')) {
    throw new InvalidRequestError('The request body must hold "cases", an array of 1 to 100 cases.', [
      { field: 'cases', message: 'cases is required' },
    ]);
  }
  if (!Array.isArray(body.cases)) {
    throw new InvalidRequestError('"cases" must be an array of 1 to 100 cases.', [{ field: 'cases', message: 'cases must be an array' }]);
  }
  if (unknownFields.length > 0) {
    throw new InvalidRequestError(
      `Unknown field(s) in the request body: ${unknownFields.slice(0, 5).join(', ')}.`,
      unknownFieldErrors(unknownFields, (field) => `${field} is not a recognised field`),
    );
  }
  const idempotencyKey = parseIdempotencyKey(event);
  checkBatchSize(body.cases.length);
  return { cases: body.cases, idempotencyKey };
}
