import { CodedError } from '../../../lib/errors.js';
import { amountsOf, type StoredCase } from '../../../lib/cases/case-record.js';
import { parseQuoteAsOf } from '../../../lib/cases/read-case.js';

// 23:30 UTC on 30 June 2026 is 00:30 on 1 July in London (BST): "today" is 1 July.
const NOW = new Date('2026-06-30T23:30:00Z');

function refusal(single: Record<string, string> | null, multi: Record<string, string[]> | null = null) {
  try {
    parseQuoteAsOf(single, multi, NOW);
  } catch (error) {
    return error instanceof CodedError
      ? { code: error.code, fields: (error.extensions.errors as { field: string }[]).map((e) => e.field) }
      : error;
  }
  return undefined;
}

describe('A settlement quote date (?asOf=)', () => {
  it('runs from today in London to 365 days ahead, both included', () => {
    expect(parseQuoteAsOf({ asOf: '2026-07-01' }, { asOf: ['2026-07-01'] }, NOW)).toBe('2026-07-01');
    expect(parseQuoteAsOf({ asOf: '2027-07-01' }, { asOf: ['2027-07-01'] }, NOW)).toBe('2027-07-01');
    expect(parseQuoteAsOf(null, null, NOW)).toBeUndefined();
    expect(parseQuoteAsOf({ limit: '3' }, { limit: ['3'] }, NOW)).toBeUndefined();
  });

  it.each([
    ['yesterday in London (today by the UTC date)', '2026-06-30'],
    ['366 days ahead', '2027-07-02'],
    ['an impossible date', '2026-09-31'],
    ['a date-time', '2026-07-02T00:00:00Z'],
    ['empty', ''],
  ])('refuses %s with INVALID_REQUEST naming asOf', (_name, value) => {
    expect(refusal({ asOf: value }, { asOf: [value] })).toEqual({ code: 'INVALID_REQUEST', fields: ['asOf'] });
  });

  it('refuses the parameter given twice, even with the same date', () => {
    expect(refusal({ asOf: '2026-07-02' }, { asOf: ['2026-07-02', '2026-07-02'] })).toEqual({ code: 'INVALID_REQUEST', fields: ['asOf'] });
  });
});

describe("A case's amounts are taken", () => {
  const stored = {
    status: 'READY',
    principalPence: 100_000,
    dueDate: '2026-05-31',
    updatedAt: '2026-06-01T10:00:00.000Z',
    statusHistory: [{ status: 'DRAFT', at: '2026-06-01T09:00:00.000Z' }],
  } as StoredCase;

  it("for an open case, as of today's London date, or the quoted date", () => {
    expect(amountsOf(stored, { now: NOW }).asOf).toBe('2026-07-01');
    expect(amountsOf(stored, { now: NOW, quoteAsOf: '2026-12-31' }).asOf).toBe('2026-12-31');
  });

  it('for a withdrawn case, as of the London day it was withdrawn, whatever the quote', () => {
    const withdrawn = {
      ...stored,
      status: 'WITHDRAWN',
      statusHistory: [...stored.statusHistory!, { status: 'WITHDRAWN', at: '2026-06-10T23:15:00.000Z' }],
    } as StoredCase;
    expect(amountsOf(withdrawn, { now: NOW, quoteAsOf: '2026-12-31' }).asOf).toBe('2026-06-11');
  });

  it('claiming by default for a case stored before the choice existed', () => {
    // 1,000.00 due 31 May 2026: 1 Jun–1 Jul = 31 days × 11.75 % ÷ 365 = 9.9795 → 9.98
    expect(amountsOf(stored, { now: NOW })).toMatchObject({ compensation: '70.00', interestRate: '11.75', interest: '9.98' });
    expect(amountsOf({ ...stored, claimStatutoryInterest: false }, { now: NOW })).toMatchObject({ compensation: '0.00', interest: '0.00' });
  });
});
