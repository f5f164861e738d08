import { randomBytes } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { encodeResponse } from '../../../lib/adapters/dynamodb/idempotency-store.js';

describe('the answer kept for an Idempotency-Key replay', () => {
  const created = Array.from({ length: 5 }, (_, i) => ({ index: i, invoiceRef: `INV-${i}`, id: `case_${i}`, reference: `PC-222-22${i}` }));

  it('is stored as a plain map when small', () => {
    expect(encodeResponse({ created, rejected: [] })).toEqual({ attribute: 'response', value: { created, rejected: [] } });
  });

  it('always fits a DynamoDB item, keeping every created item whole, even for 1 MiB of incompressible echoes', () => {
    const rejected = Array.from({ length: 95 }, (_, i) => ({
      index: i + 5,
      invoiceRef: randomBytes(8000).toString('base64'),
      code: 'INVALID_FIELD',
      message: 'invoiceRef must be 1 to 100 characters',
      errors: [],
    }));
    const encoded = encodeResponse({ created, rejected });
    expect(encoded.attribute).toBe('responseGz');
    const bytes = encoded.value as Buffer;
    expect(bytes.length).toBeLessThan(350 * 1024);
    const decoded = JSON.parse(gunzipSync(bytes).toString('utf8')) as {
      created: unknown[];
      rejected: { index: number }[];
      compacted: boolean;
    };
    expect(decoded.created).toEqual(created);
    expect(decoded.compacted).toBe(true);
    expect(decoded.rejected.map((r) => r.index)).toEqual(rejected.map((r) => r.index));
  });
});
