import { ALLOWED_TRANSITIONS } from '../../../lib/cases/case-lifecycle.js';
import { CASE_STATUSES, isOpenStatus, toCaseView, type CaseStatus, type StoredCase } from '../../../lib/cases/case-record.js';
import { exactPence } from '../../../lib/cases/money.js';
import {
  decideClose,
  decidePayment,
  decideRecoveryStart,
  decideRecoveryUpdate,
  paymentRequestSchema,
  recoveryUpdateBodySchema,
  recoveryUpdateSchema,
} from '../../../lib/cases/recovery.js';

/** The pure rules of lib/cases/recovery.ts (product rules, "Recovery and money"). */
const NOW = new Date('2026-03-04T10:20:30.000Z');
const CREATED = '2026-03-01T09:00:00.000Z';

const stored = (over: Partial<StoredCase> = {}): StoredCase => ({
  caseId: 'case_7Gk2mP9qR4sT8vW1xY3zA5',
  companyId: 'cmp_AAAAAAAAAAAAAAAA',
  reference: 'PC-222-22B',
  status: 'READY',
  recoveryGate: 'AUTO_ATTESTED',
  debtorName: 'Acme Widgets Ltd',
  debtorEmail: 'ap@acme.example',
  invoiceRef: 'INV-1',
  invoiceRefKey: 'inv-1',
  invoiceDate: '2025-01-10',
  dueDate: '2025-02-10',
  principalPence: 100_000,
  claimStatutoryInterest: false,
  currency: 'GBP',
  invoiceFileKey: 'invoices/x.pdf',
  createdAt: CREATED,
  updatedAt: CREATED,
  createdByKeyId: 'KeyAAAAAAAAAAAAA',
  requestId: 'req',
  mode: 'live',
  debtorVerification: { status: 'NOT_REQUESTED' },
  statusHistory: [{ status: 'DRAFT', at: CREATED }],
  ...over,
});

const payment = (amountPence: number, paidAt = '2025-03-01') => ({ amountPence, paidAt, source: 'DIRECT' as const });

/** What each rule does from each status: the status it leads to, or the error code refusing it. */
function outcome(decide: () => { after: StoredCase }): string {
  try {
    return decide().after.status;
  } catch (error) {
    return (error as { code?: string }).code ?? String(error);
  }
}

describe('every transition the recovery rules make is in the one transitions table, and every other is refused', () => {
  const at = (status: CaseStatus) => stored({ status });
  it.each(CASE_STATUSES)('from %s', (status) => {
    const start = outcome(() => decideRecoveryStart(at(status), NOW));
    const close = outcome(() => decideClose(at(status), { reason: 'SETTLED' }, NOW));
    const partPayment = outcome(() => decidePayment(at(status), payment(100), NOW));
    const fullPayment = outcome(() => decidePayment(at(status), payment(100_000), NOW));
    const final = !isOpenStatus(status);
    expect(start).toBe(final ? 'CASE_NOT_OPEN' : status === 'READY' ? 'IN_RECOVERY' : 'INVALID_TRANSITION');
    expect(close).toBe(final ? 'CASE_NOT_OPEN' : status === 'IN_RECOVERY' ? 'CLOSED' : 'INVALID_TRANSITION');
    expect(partPayment).toBe(final ? 'CASE_NOT_OPEN' : status);
    expect(fullPayment).toBe(final ? 'CASE_NOT_OPEN' : 'CLOSED');
    for (const to of [start, close, partPayment, fullPayment])
      if ((CASE_STATUSES as readonly string[]).includes(to) && to !== status) expect(ALLOWED_TRANSITIONS[status]).toContain(to);
  });
});

describe('a payment', () => {
  it('adds its facts, counts a revision, and reports the earlier amounts', () => {
    const d = decidePayment(stored({ revision: 3 }), payment(25_050), NOW);
    expect(d.after.paymentFacts).toEqual([{ amountPence: 25_050, paidAt: '2025-03-01' }]);
    expect(d.after.revision).toBe(4);
    expect(d.closed).toBe(false);
    expect(d.previousAttributes).toEqual({ amounts: expect.objectContaining({ paid: '0.00', outstanding: '1000.00' }) });
    expect(toCaseView(d.after, { now: NOW }).amounts).toMatchObject({ paid: '250.50', outstanding: '749.50' });
  });

  it('that leaves nothing outstanding closes the case PAID_IN_FULL, from any open status', () => {
    for (const status of ['DRAFT', 'READY', 'ON_HOLD', 'IN_RECOVERY'] as const) {
      const d = decidePayment(stored({ status }), payment(100_000), NOW);
      expect(d.after).toMatchObject({ status: 'CLOSED', closure: { reason: 'PAID_IN_FULL', at: NOW.toISOString() } });
      expect(d.after.statusHistory!.at(-1)).toEqual({ status: 'CLOSED', at: NOW.toISOString(), reason: 'PAID_IN_FULL' });
      expect(d.previousAttributes).toMatchObject({ status, closure: null });
      expect(d.closed).toBe(true);
    }
  });

  it('above today\u2019s outstanding is refused, naming the outstanding', () => {
    expect(() => decidePayment(stored({ paymentFacts: [{ amountPence: 40_000, paidAt: '2025-03-01' }] }), payment(60_001), NOW)).toThrow(
      expect.objectContaining({ code: 'PAYMENT_EXCEEDS_OUTSTANDING', extensions: { outstanding: '600.00' } }),
    );
  });

  it('counts interest to today in the outstanding it checks against', () => {
    const claiming = stored({ claimStatutoryInterest: true });
    const outstanding = toCaseView(claiming, { now: NOW }).amounts.outstanding;
    const pence = Number(outstanding.replace('.', ''));
    expect(pence).toBeGreaterThan(100_000);
    expect(decidePayment(claiming, payment(pence, '2026-03-04'), NOW).after.status).toBe('CLOSED');
    expect(() => decidePayment(claiming, payment(pence + 1, '2026-03-04'), NOW)).toThrow(
      expect.objectContaining({ code: 'PAYMENT_EXCEEDS_OUTSTANDING', extensions: { outstanding } }),
    );
  });

  it('dated after today in London or before the invoice date is refused', () => {
    // 2026-03-04 is today in London at NOW; the 5th is tomorrow.
    expect(() => decidePayment(stored(), payment(100, '2026-03-05'), NOW)).toThrow(expect.objectContaining({ code: 'INVALID_REQUEST' }));
    expect(() => decidePayment(stored(), payment(100, '2025-01-09'), NOW)).toThrow(expect.objectContaining({ code: 'INVALID_REQUEST' }));
    expect(decidePayment(stored(), payment(100, '2025-01-10'), NOW).after.paymentFacts).toHaveLength(1);
    expect(decidePayment(stored(), payment(100, '2026-03-04'), NOW).after.paymentFacts).toHaveLength(1);
  });

  it('beyond the 100th is refused PAYMENT_LIMIT_REACHED', () => {
    const facts = Array.from({ length: 100 }, () => ({ amountPence: 1, paidAt: '2025-03-01' }));
    expect(() => decidePayment(stored({ paymentFacts: facts }), payment(1), NOW)).toThrow(
      expect.objectContaining({ code: 'PAYMENT_LIMIT_REACHED' }),
    );
    expect(decidePayment(stored({ paymentFacts: facts.slice(1) }), payment(1), NOW).after.paymentFacts).toHaveLength(100);
  });
});

describe('closing by the recovery team', () => {
  it('takes PAID_IN_FULL only when nothing is outstanding', () => {
    expect(() => decideClose(stored({ status: 'IN_RECOVERY' }), { reason: 'PAID_IN_FULL' }, NOW)).toThrow(
      expect.objectContaining({ code: 'INVALID_TRANSITION' }),
    );
  });

  it('records the reason and note as the closure, and in the history', () => {
    const d = decideClose(stored({ status: 'IN_RECOVERY' }), { reason: 'INSOLVENT', note: 'Administration' }, NOW);
    expect(d.after.closure).toEqual({ reason: 'INSOLVENT', at: NOW.toISOString(), note: 'Administration' });
    expect(d.after.statusHistory!.at(-1)).toEqual({ status: 'CLOSED', at: NOW.toISOString(), reason: 'INSOLVENT' });
    expect(d.previousAttributes).toEqual({ status: 'IN_RECOVERY', closure: null });
    expect(toCaseView(d.after, { now: NOW }).closure).toEqual(d.after.closure);
  });

  it('dispatches a collected payment as COLLECTED money', () => {
    const d = decideRecoveryUpdate(stored(), { type: 'payment_collected', amount: 10.1, paidAt: '2025-03-01' }, NOW);
    expect(d.after.paymentFacts).toEqual([{ amountPence: 1010, paidAt: '2025-03-01' }]);
  });
});

describe('payment amounts are exact pence from the decimal digits', () => {
  it.each([
    [0.1, 10],
    [0.29, 29],
    [1.15, 115],
    [4.35, 435],
    [19.99, 1999],
    [1250.5, 125050],
    [12345678.91, 1234567891],
    [5e-2, 5],
  ])('%p → %p pence', (amount, pence) => {
    expect(exactPence(amount)).toBe(pence);
  });

  it.each([1.005, 0.001, 1e-7, -1, Number.NaN, Number.POSITIVE_INFINITY, 1e21])('refuses %p', (amount) => {
    expect(exactPence(amount)).toBeUndefined();
  });
});

describe('the request schemas', () => {
  it('take a payment body and refuse unknown fields, zero, a third decimal, an impossible date, a long reference', () => {
    expect(paymentRequestSchema.safeParse({ amount: 10.5, paidAt: '2025-03-01', reference: 'BACS 42' }).success).toBe(true);
    for (const bad of [
      { amount: 10, paidAt: '2025-03-01', extra: 1 },
      { amount: 0, paidAt: '2025-03-01' },
      { amount: 1.005, paidAt: '2025-03-01' },
      { amount: '10', paidAt: '2025-03-01' },
      { amount: 10, paidAt: '2025-02-30' },
      { amount: 10, paidAt: '2025-03-01', reference: '' },
      { amount: 10, paidAt: '2025-03-01', reference: 'x'.repeat(101) },
      { paidAt: '2025-03-01' },
    ])
      expect(paymentRequestSchema.safeParse(bad).success).toBe(false);
  });

  it('take one update with the fields its type needs, and refuse fields another type takes', () => {
    const by = { name: 'Rita', email: 'rita@recovery.example' };
    const caseId = 'case_7Gk2mP9qR4sT8vW1xY3zA5';
    expect(recoveryUpdateSchema.safeParse({ updateId: 'u1', caseId, type: 'recovery_started', by }).success).toBe(true);
    expect(recoveryUpdateSchema.safeParse({ updateId: 'u1', caseId, type: 'closed', reason: 'SETTLED', note: 'n', by }).success).toBe(true);
    for (const bad of [
      { updateId: '', caseId, type: 'recovery_started', by },
      { updateId: 'x'.repeat(101), caseId, type: 'recovery_started', by },
      { updateId: 'u', caseId, type: 'closed', by },
      { updateId: 'u', caseId, type: 'closed', reason: 'PAID', by },
      { updateId: 'u', caseId, type: 'payment_collected', amount: 5, by },
      { updateId: 'u', caseId, type: 'recovery_started', amount: 5, by },
      { updateId: 'u', caseId, type: 'recovery_started' },
      { updateId: 'u', caseId, type: 'recovery_started', by: { name: 'R', email: 'nope' } },
    ])
      expect(recoveryUpdateSchema.safeParse(bad).success).toBe(false);
    // The test helper's body: no updateId, no by.
    expect(recoveryUpdateBodySchema.safeParse({ type: 'payment_collected', amount: 5, paidAt: '2025-03-01' }).success).toBe(true);
    expect(recoveryUpdateBodySchema.safeParse({ type: 'recovery_started', by }).success).toBe(false);
  });
});
