import { checkCase, firstCode, type CheckContext } from '../../../lib/cases/case-input.js';
import { formatReference, REFERENCE_PATTERN } from '../../../lib/cases/case-reference.js';
import { isOutOfJurisdiction, normaliseCompanyNumber } from '../../../lib/cases/company-number.js';
import { isAfter, isInPast, londonDate, parseCaseDate } from '../../../lib/cases/dates.js';
import { invoiceRefKey } from '../../../lib/cases/invoice-ref.js';
import { toPence } from '../../../lib/cases/money.js';
import { formatPence } from '../../../lib/cases/money.js';
import { parseIdempotencyKey } from '../../../lib/http/batch-envelope.js';

// 2026-06-15 12:00 in London (BST, UTC+1).
const NOW = new Date('2026-06-15T11:00:00Z');
const ctx: CheckContext = { now: NOW, fileKeyProblem: (key) => (key.startsWith('invoices/') ? undefined : 'not a key issued to you') };

export function validInput(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    debtorName: 'Acme Widgets Ltd',
    debtorEmail: 'accounts@acme.example',
    invoiceRef: 'INV-1001',
    invoiceDate: '2026-01-10',
    dueDate: '2026-02-10',
    principalAmount: 1250.5,
    invoiceFileKey: 'invoices/x.pdf',
    attestation: { b2b: true, under10k: true, within6years: true, undisputed: true, attestedBy: 'Jane Smith, Credit Controller' },
    ...overrides,
  };
}

const codeOf = (input: unknown) => firstCode(checkCase(input, ctx).findings);

describe('a case is accepted by the pure rules when', () => {
  it('every field is valid', () => {
    const check = checkCase(validInput(), ctx);
    expect(check.findings).toEqual([]);
    expect(check.value).toMatchObject({ principalPence: 125050, invoiceRefKey: 'inv-1001' });
  });

  it('the amount is exactly 10000 and at least 0.01', () => {
    expect(codeOf(validInput({ principalAmount: 10000 }))).toBeUndefined();
    expect(codeOf(validInput({ principalAmount: 0.01 }))).toBeUndefined();
    expect(codeOf(validInput({ principalAmount: 9999.99 }))).toBeUndefined();
  });

  it('debtorName is 300 characters and invoiceRef 100', () => {
    expect(codeOf(validInput({ debtorName: 'x'.repeat(300), invoiceRef: 'r'.repeat(100) }))).toBeUndefined();
  });

  it('the due date was yesterday in London', () => {
    expect(codeOf(validInput({ dueDate: '2026-06-14', invoiceDate: '2026-06-01' }))).toBeUndefined();
  });

  it('optional fields are absent, null or within their limits', () => {
    expect(codeOf(validInput({ debtorCompanyNo: null, debtorAddress: null, description: null }))).toBeUndefined();
    expect(codeOf(validInput({ debtorCompanyNo: '1234', debtorAddress: 'a'.repeat(500), description: 'd'.repeat(2000) }))).toBeUndefined();
  });
});

describe('claimStatutoryInterest', () => {
  it('is stored true when absent or null, and as sent when a boolean', () => {
    expect(checkCase(validInput(), ctx).value?.claimStatutoryInterest).toBe(true);
    expect(checkCase(validInput({ claimStatutoryInterest: null }), ctx).value?.claimStatutoryInterest).toBe(true);
    expect(checkCase(validInput({ claimStatutoryInterest: false }), ctx).value?.claimStatutoryInterest).toBe(false);
    expect(checkCase(validInput({ claimStatutoryInterest: true }), ctx).value?.claimStatutoryInterest).toBe(true);
  });
});

describe('a case is rejected with INVALID_FIELD when', () => {
  it.each([
    ['debtorName is missing', { debtorName: undefined }, 'debtorName'],
    ['debtorName is 301 characters', { debtorName: 'x'.repeat(301) }, 'debtorName'],
    ['debtorName is blank', { debtorName: '   ' }, 'debtorName'],
    ['debtorEmail is not an address', { debtorEmail: 'not-an-email' }, 'debtorEmail'],
    ['debtorEmail is longer than 254', { debtorEmail: `${'a'.repeat(250)}@b.co` }, 'debtorEmail'],
    ['invoiceRef is 101 characters', { invoiceRef: 'r'.repeat(101) }, 'invoiceRef'],
    ['invoiceRef is empty', { invoiceRef: '' }, 'invoiceRef'],
    ['invoiceRef is a number', { invoiceRef: 1001 }, 'invoiceRef'],
    ['invoiceDate is an impossible date', { invoiceDate: '2025-02-30' }, 'invoiceDate'],
    ['dueDate has no zone', { dueDate: '2026-02-10T10:00:00' }, 'dueDate'],
    ['dueDate is in another format', { dueDate: '10/02/2026' }, 'dueDate'],
    ['principalAmount is a string', { principalAmount: '1250.50' }, 'principalAmount'],
    ['principalAmount has three decimals', { principalAmount: 10000.001 }, 'principalAmount'],
    ['invoiceFileKey is missing', { invoiceFileKey: undefined }, 'invoiceFileKey'],
    ['attestation is missing', { attestation: undefined }, 'attestation'],
    [
      'an attestation flag is the string "true"',
      { attestation: { ...(validInput().attestation as object), b2b: 'true' } },
      'attestation.b2b',
    ],
    ['attestedBy is blank', { attestation: { ...(validInput().attestation as object), attestedBy: ' ' } }, 'attestation.attestedBy'],
    ['debtorCompanyNo is not a company number', { debtorCompanyNo: 'ABC' }, 'debtorCompanyNo'],
    ['debtorAddress is 501 characters', { debtorAddress: 'a'.repeat(501) }, 'debtorAddress'],
    ['description is 2001 characters', { description: 'd'.repeat(2001) }, 'description'],
    ['claimStatutoryInterest is the string "false"', { claimStatutoryInterest: 'false' }, 'claimStatutoryInterest'],
    ['a misspelt optional field is sent', { debtorCompanyNumber: 'SC123456' }, 'debtorCompanyNumber'],
    [
      'an unknown attestation field is sent',
      { attestation: { ...(validInput().attestation as object), signed: true } },
      'attestation.signed',
    ],
  ])('%s', (_name, overrides, field) => {
    const check = checkCase(validInput(overrides), ctx);
    expect(firstCode(check.findings)).toBe('INVALID_FIELD');
    expect(check.findings.map((f) => f.field)).toContain(field);
  });

  it.each(['debtorName', 'debtorEmail', 'invoiceRef', 'invoiceDate', 'dueDate', 'principalAmount', 'invoiceFileKey', 'attestation'])(
    'the required field %s is missing',
    (field) => {
      const input = validInput();
      delete input[field];
      const check = checkCase(input, ctx);
      expect(firstCode(check.findings)).toBe('INVALID_FIELD');
      expect(check.findings).toContainEqual({ code: 'INVALID_FIELD', field, message: `${field} is required` });
    },
  );

  it.each(['b2b', 'under10k', 'within6years', 'undisputed', 'attestedBy'])('the attestation field %s is missing', (field) => {
    const attestation = { ...(validInput().attestation as Record<string, unknown>) };
    delete attestation[field];
    const check = checkCase(validInput({ attestation }), ctx);
    expect(check.findings).toContainEqual({
      code: 'INVALID_FIELD',
      field: `attestation.${field}`,
      message: `attestation.${field} is required`,
    });
  });

  it('the element is not an object', () => {
    for (const raw of [null, 1, 'x', [], true]) expect(codeOf(raw)).toBe('INVALID_FIELD');
  });

  it('several fields are wrong, listing every one of them', () => {
    const fields = checkCase(validInput({ debtorName: '', debtorEmail: 'x', principalAmount: 'a' }), ctx).findings.map((f) => f.field);
    expect(fields).toEqual(expect.arrayContaining(['debtorName', 'debtorEmail', 'principalAmount']));
  });
});

describe('the business rules reject a case', () => {
  it.each(['b2b', 'under10k', 'within6years', 'undisputed'])('with ATTESTATION_FAILED naming %s when it is false', (flag) => {
    const check = checkCase(validInput({ attestation: { ...(validInput().attestation as object), [flag]: false } }), ctx);
    expect(firstCode(check.findings)).toBe('ATTESTATION_FAILED');
    expect(check.findings[0]!.message).toContain(flag);
  });

  it('with AMOUNT_OUT_OF_RANGE at 10000.01, 0 and below', () => {
    for (const amount of [10000.01, 0, -5, 1e9]) expect(codeOf(validInput({ principalAmount: amount }))).toBe('AMOUNT_OUT_OF_RANGE');
  });

  it('with INVOICE_DATE_AFTER_DUE_DATE', () => {
    expect(codeOf(validInput({ invoiceDate: '2026-02-11', dueDate: '2026-02-10' }))).toBe('INVOICE_DATE_AFTER_DUE_DATE');
  });

  it('with DUE_DATE_NOT_PAST when due today in London, or tomorrow, or a minute from now', () => {
    expect(codeOf(validInput({ dueDate: '2026-06-15', invoiceDate: '2026-06-01' }))).toBe('DUE_DATE_NOT_PAST');
    expect(codeOf(validInput({ dueDate: '2026-06-16', invoiceDate: '2026-06-01' }))).toBe('DUE_DATE_NOT_PAST');
    expect(codeOf(validInput({ dueDate: '2026-06-15T11:01:00Z', invoiceDate: '2026-06-01' }))).toBe('DUE_DATE_NOT_PAST');
    expect(codeOf(validInput({ dueDate: '2026-06-15T10:59:00Z', invoiceDate: '2026-06-01' }))).toBeUndefined();
  });

  it('with INVALID_FILE_KEY when the key is not one issued to the company', () => {
    expect(codeOf(validInput({ invoiceFileKey: '../other/x.pdf' }))).toBe('INVALID_FILE_KEY');
  });

  it('with OUT_OF_JURISDICTION for Scottish and Northern Irish companies', () => {
    for (const no of ['SC123456', 'sc123456', 'NI012345', 'R0000123', 'SO000001', 'NC000001']) {
      expect(codeOf(validInput({ debtorCompanyNo: no }))).toBe('OUT_OF_JURISDICTION');
    }
    expect(codeOf(validInput({ debtorCompanyNo: 'OC123456' }))).toBeUndefined();
  });

  it('reporting the first failing rule in the product order and listing all problems', () => {
    const check = checkCase(
      validInput({
        principalAmount: 0,
        dueDate: '2030-01-01',
        debtorCompanyNo: 'SC123456',
        attestation: { ...(validInput().attestation as object), undisputed: false },
      }),
      ctx,
    );
    expect(firstCode(check.findings)).toBe('ATTESTATION_FAILED');
    expect(check.findings.map((f) => f.code)).toEqual([
      'ATTESTATION_FAILED',
      'AMOUNT_OUT_OF_RANGE',
      'DUE_DATE_NOT_PAST',
      'OUT_OF_JURISDICTION',
    ]);
  });
});

describe('dates', () => {
  it('parse calendar dates and zoned date-times, refusing impossible ones', () => {
    expect(parseCaseDate('2024-02-29')).toEqual({ kind: 'date', date: '2024-02-29' });
    expect(parseCaseDate('2025-02-29')).toBeUndefined();
    expect(parseCaseDate('2025-13-01')).toBeUndefined();
    expect(parseCaseDate('2025-01-01T24:00:00Z')).toBeUndefined();
    expect(parseCaseDate('2025-01-01T10:00:00+25:00')).toBeUndefined();
    expect(parseCaseDate('2025-01-01T10:00Z')).toMatchObject({ kind: 'datetime', epochMs: Date.UTC(2025, 0, 1, 10) });
    expect(parseCaseDate('2025-01-01T10:00:00.123456+01:30')).toMatchObject({ epochMs: Date.UTC(2025, 0, 1, 8, 30, 0, 123) });
  });

  it('compare a date-only with a date-time by the London calendar date', () => {
    const d = (s: string) => parseCaseDate(s)!;
    expect(isAfter(d('2025-03-01'), d('2025-03-01T09:00:00Z'))).toBe(false);
    expect(isAfter(d('2025-03-02'), d('2025-03-01T23:30:00Z'))).toBe(true); // 23:30Z on 1 March is still 1 March in London (GMT)
    expect(isAfter(d('2025-07-02'), d('2025-07-01T23:30:00Z'))).toBe(false); // 00:30 BST on 2 July
    expect(isAfter(d('2025-07-03'), d('2025-07-01T23:30:00Z'))).toBe(true);
    expect(isAfter(d('2025-03-01T10:00:00Z'), d('2025-03-01T09:59:59Z'))).toBe(true);
  });

  it('decide "in the past" in Europe/London for dates', () => {
    const lateEvening = new Date('2026-06-14T23:30:00Z'); // already 15 June in London
    expect(londonDate(lateEvening.getTime())).toBe('2026-06-15');
    expect(isInPast(parseCaseDate('2026-06-14')!, lateEvening)).toBe(true);
    expect(isInPast(parseCaseDate('2026-06-15')!, lateEvening)).toBe(false);
  });
});

describe('money', () => {
  it('is held as whole pence and shown with two decimals', () => {
    expect(toPence(1250.5)).toBe(125050);
    expect(toPence(0.29)).toBe(29);
    expect(toPence(10000)).toBe(1000000);
    expect(toPence(1.005)).toBeUndefined();
    expect(toPence(1e-7)).toBeUndefined();
    expect(toPence(Number.NaN)).toBeUndefined();
    expect(formatPence(125050)).toBe('1250.50');
    expect(formatPence(5)).toBe('0.05');
    expect(formatPence(1000000)).toBe('10000.00');
  });
});

describe('company numbers', () => {
  it('are upper-cased and zero-padded', () => {
    expect(normaliseCompanyNumber('1234')).toBe('00001234');
    expect(normaliseCompanyNumber(' sc123456 ')).toBe('SC123456');
    expect(normaliseCompanyNumber('123456789')).toBeUndefined();
    expect(normaliseCompanyNumber('S1234567')).toBeUndefined();
    expect(isOutOfJurisdiction('00001234')).toBe(false);
  });
});

describe('the duplicate guard key', () => {
  it('treats case, spacing and Unicode composition variants as one invoice', () => {
    expect(invoiceRefKey(' inv-1 ')).toBe(invoiceRefKey('INV-1'));
    expect(invoiceRefKey('Caf\u00e9-1')).toBe(invoiceRefKey('CAFE\u0301-1'));
    expect(invoiceRefKey('STRASSE-1')).toBe(invoiceRefKey('stra\u00dfe-1'));
    expect(invoiceRefKey('INV-1')).not.toBe(invoiceRefKey('INV-10'));
  });
});

describe('case references', () => {
  it('are short, unambiguous and sequential', () => {
    const refs = [0, 1, 29, 30, 729_000_000, 2 ** 40].map(formatReference);
    for (const ref of refs) {
      expect(ref.length).toBeLessThanOrEqual(16);
      expect(ref).toMatch(REFERENCE_PATTERN);
      expect(ref.slice(3)).not.toMatch(/[01ILOU]/);
    }
    expect(refs[0]).toBe('PC-222-222');
    expect(refs[1]).toBe('PC-222-223');
    expect(new Set(Array.from({ length: 2000 }, (_, i) => formatReference(i))).size).toBe(2000);
  });
});

describe('the Idempotency-Key header', () => {
  const ev = (value: string | string[]) => ({
    headers: {},
    multiValueHeaders: { 'Idempotency-Key': Array.isArray(value) ? value : [value] },
  });
  it('accepts 1 to 255 visible ASCII characters and the quoted form', () => {
    expect(parseIdempotencyKey(ev('abc-123'))).toBe('abc-123');
    expect(parseIdempotencyKey(ev('"abc-123"'))).toBe('abc-123');
    expect(parseIdempotencyKey(ev('k'.repeat(255)))).toBe('k'.repeat(255));
    expect(parseIdempotencyKey({ headers: {}, multiValueHeaders: {} })).toBeUndefined();
  });
  it('refuses empty, overlong, spaced, non-ASCII or repeated keys', () => {
    for (const bad of ['', 'k'.repeat(256), 'a b', 'caf\u00e9', '""', '"a\\b"']) {
      expect(() => parseIdempotencyKey(ev(bad))).toThrow(expect.objectContaining({ code: 'INVALID_REQUEST' }));
    }
    expect(() => parseIdempotencyKey(ev(['a', 'b']))).toThrow(expect.objectContaining({ code: 'INVALID_REQUEST' }));
  });
});
