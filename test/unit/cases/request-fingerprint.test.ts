import { createHash } from 'node:crypto';
import { requestFingerprint } from '../../../lib/cases/request-fingerprint.js';

const sha = (text: string) => createHash('sha256').update(text).digest('hex');

describe('the fingerprint of a request body (Idempotency-Key sameRequest)', () => {
  it('is the SHA-256 of the canonical JSON: keys sorted at every level, no whitespace', () => {
    expect(requestFingerprint({ b: [1, { d: null, c: 'x' }], a: true })).toBe(sha('{"a":true,"b":[1,{"c":"x","d":null}]}'));
    expect(requestFingerprint([])).toBe(sha('[]'));
    expect(requestFingerprint({})).toBe(sha('{}'));
  });

  it('is the same for the same body in another key order, and differs for any changed value', () => {
    const a = { cases: [{ invoiceRef: 'INV-1', principalAmount: 10.5, attestation: { b2b: true } }] };
    const reordered = { cases: [{ attestation: { b2b: true }, principalAmount: 10.5, invoiceRef: 'INV-1' }] };
    expect(requestFingerprint(reordered)).toBe(requestFingerprint(a));
    expect(requestFingerprint({ cases: [{ ...a.cases[0], principalAmount: 10.51 }] })).not.toBe(requestFingerprint(a));
    expect(requestFingerprint({ cases: [{ ...a.cases[0], invoiceRef: 'INV-2' }] })).not.toBe(requestFingerprint(a));
  });

  it('copes with bodies nested far deeper than the call stack', () => {
    const deep = JSON.parse(`${'['.repeat(500_000)}${']'.repeat(500_000)}`) as unknown;
    expect(requestFingerprint(deep)).toBe(sha(`${'['.repeat(500_000)}${']'.repeat(500_000)}`));
  });
});
