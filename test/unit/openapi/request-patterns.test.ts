import fc from 'fast-check';
import { buildOpenApiDocument } from '../../../infra/contract/openapi/document.js';
import { normaliseCompanyNumber } from '../../../lib/cases/company-number.js';
import { parseCaseDate } from '../../../lib/cases/dates.js';
import { parseListQuery } from '../../../lib/cases/list-cases.js';
import { CURSOR_PATTERN, MAX_CURSOR_LENGTH } from '../../../lib/cases/list-cursor.js';
import { parseIdempotencyKey } from '../../../lib/http/batch-envelope.js';
import { parseCreateEndpointRequest } from '../../../lib/webhooks/webhook-endpoint.js';

/**
 * The patterns docs/openapi.json states for request fields are the service's own rules: a
 * validating proxy or a generated client that applies them never refuses what the service accepts,
 * and refuses what it refuses. Each pattern is checked as JSON Schema applies it (an ECMAScript
 * regular expression with the `u` flag) against the function the handler calls.
 */
type Json = Record<string, unknown>;
const doc = buildOpenApiDocument() as unknown as {
  components: { parameters: Record<string, { schema: Json }>; schemas: Record<string, { properties: Record<string, Json> }> };
  paths: Record<string, Record<string, { parameters?: { name: string; schema: Json }[] }>>;
};
const matches = (schema: Json) => {
  const pattern = new RegExp(schema.pattern as string, 'u');
  return (value: string) => pattern.test(value) && value.length >= ((schema.minLength as number | undefined) ?? 0);
};
const caseInput = doc.components.schemas.CaseInput!.properties;
const listParameter = (name: string) => doc.paths['/api/v1/cases']!.get!.parameters!.find((p) => p.name === name)!.schema;

const accepts = <T>(parse: () => T) => {
  try {
    parse();
    return true;
  } catch {
    return false;
  }
};

describe('the request patterns in docs/openapi.json', () => {
  it('Idempotency-Key: exactly the header values the create handler accepts, quoted form included', () => {
    const documented = matches(doc.components.parameters.IdempotencyKey!.schema);
    const service = (value: string) => accepts(() => parseIdempotencyKey({ headers: { 'Idempotency-Key': value }, multiValueHeaders: {} }));
    const samples = [
      'batch-1',
      '"batch-1"',
      '"a\\"b"',
      '"a\\b"',
      'has space',
      '"has space"',
      '""',
      '"',
      '\u00e9',
      'x'.repeat(255),
      'x'.repeat(256),
    ];
    expect(samples.map(documented)).toEqual(samples.map(service));
    const unit = fc.constantFrom('a', '~', '"', '\\', ' ', '\t', '\u007f', '\u00e9');
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit, maxLength: 12 }), fc.string({ unit, minLength: 250, maxLength: 260 })), (value) => {
        expect(documented(value)).toBe(service(value));
      }),
    );
    expect([documented('has space'), service('has space')]).toEqual([false, false]);
  });

  it('debtorCompanyNo: exactly the values the case rules take for a UK company number', () => {
    const documented = matches(caseInput.debtorCompanyNo!);
    const service = (value: string) => normaliseCompanyNumber(value) !== undefined;
    const unit = fc.constantFrom('0', '7', 'a', 'S', 'C', 'R', ' ', '-', '\u00a0');
    fc.assert(fc.property(fc.string({ unit, maxLength: 11 }), (value) => expect(documented(value)).toBe(service(value))));
    expect(['01234567', 'sc123456', ' 1234 ', 'R0123456', '123456789', 'AB12345', 'not a number'].map(documented)).toEqual([
      true,
      true,
      true,
      true,
      false,
      false,
      false,
    ]);
  });

  it('invoiceDate and dueDate: every date the case rules read has the documented form, and a non-date has not', () => {
    for (const field of ['invoiceDate', 'dueDate']) {
      const documented = matches(caseInput[field]!);
      const unit = fc.constantFrom('2', '0', '1', '9', '-', ':', 'T', 'Z', '+', '.', ' ', 't');
      fc.assert(
        fc.property(fc.string({ unit, maxLength: 30 }), (value) => {
          if (parseCaseDate(value) !== undefined) expect(documented(value)).toBe(true);
        }),
      );
      const good = ['2025-01-10', '2025-01-10T10:20Z', '2025-01-10T10:20:30.123456+01:00'];
      const bad = ['10/01/2025', '2025-01-10T10:20:30', '2025-1-10', 'yesterday', '2025-01-10 10:20:30Z'];
      expect([...good, ...bad].map(documented)).toEqual([...good.map(() => true), ...bad.map(() => false)]);
      expect(bad.map((value) => parseCaseDate(value))).toEqual(bad.map(() => undefined));
    }
  });

  it('createdFrom and cursor: what the list accepts has the documented form; an over-long cursor is refused by both', () => {
    const bound = matches(listParameter('createdFrom'));
    for (const value of ['2025-03-01T00:00Z', '2025-03-01T00:00:00.5+01:00']) {
      expect([bound(value), accepts(() => parseListQuery({ createdFrom: value }, {}))]).toEqual([true, true]);
    }
    expect([bound('2025-03-01'), accepts(() => parseListQuery({ createdFrom: '2025-03-01' }, {}))]).toEqual([false, false]);
    // The cursor module refuses, unread, anything longer or not base64url (an over-long one is a 400 INVALID_CURSOR).
    expect(listParameter('cursor')).toMatchObject({ maxLength: MAX_CURSOR_LENGTH, pattern: CURSOR_PATTERN.source });
  });

  it('webhook events: each type at most once, as the endpoint rules say', () => {
    const events = doc.components.schemas.CreateWebhookEndpointRequest!.properties.events!;
    expect(events.uniqueItems).toBe(true);
    const create = (list: string[]) => parseCreateEndpointRequest({ url: 'https://hooks.example.com/x', events: list }).ok;
    expect([create(['case.created', 'case.updated']), create(['case.created', 'case.created'])]).toEqual([true, false]);
  });
});
