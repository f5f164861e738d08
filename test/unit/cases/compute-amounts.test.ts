import fc from 'fast-check';
import { computeAmounts, computeAmountsInPence, type AmountFacts } from '../../../lib/cases/compute-amounts.js';
import { caseViewSchema, type CaseView } from '../../../lib/cases/case-record.js';
import { toPence } from '../../../lib/cases/money.js';
import { slowAmounts, type SlowCase } from '../../support/slow-amounts.js';

/**
 * The amounts of the product rules ("Recovery and money"), checked by hand. Every interest figure
 * below is Σ unpaid pence-days × rate ÷ 100 ÷ 365, worked out in the comment next to it (rates
 * from lib/cases/reference-rates.ts + 8.00: 2024 12-month rate H1 5.25 → 13.25, H2 5.25 → 13.25;
 * 2025 H1 4.75 → 12.75, H2 4.25 → 12.25).
 */

interface Input {
  principal: string;
  dueDate: string;
  asOf: string;
  payments?: { amount: string; paidAt: string }[];
  claimStatutoryInterest?: boolean;
}

function facts(input: Input): AmountFacts {
  return {
    principalPence: toPence(Number(input.principal))!,
    dueDate: input.dueDate,
    claimStatutoryInterest: input.claimStatutoryInterest ?? true,
    payments: (input.payments ?? []).map((p) => ({ amountPence: toPence(Number(p.amount))!, paidAt: p.paidAt })),
    asOf: input.asOf,
  };
}

const amounts = (input: Input) => computeAmounts(facts(input));

describe('The amounts a case claims', () => {
  it('add 31 days of interest at 12.75 % and the 70.00 band to a 1,000.00 invoice due on New Year’s Eve', () => {
    // 1,000.00 × 12.75 % ÷ 365 × 31 days = 10.8288 → 10.83; claimed 1,000.00 + 70.00 + 10.83.
    expect(amounts({ principal: '1000.00', dueDate: '2024-12-31', asOf: '2025-01-31' })).toEqual({
      principal: '1000.00',
      compensation: '70.00',
      interestFrom: '2025-01-01',
      interestRate: '12.75',
      interest: '10.83',
      claimed: '1080.83',
      paid: '0.00',
      outstanding: '1080.83',
      asOf: '2025-01-31',
    });
  });

  it('charge interest on what is still unpaid after a part payment (the worked example of docs/api.md)', () => {
    // 1 Apr–30 Apr: 30 days × 2,500.00 × 12.75 % ÷ 365 = 26.1986
    // 1 May–30 Jun: 61 days × 1,500.00 × 12.75 % ÷ 365 = 31.9623 (the payment counts on its own day)
    // sum 58.1609 → 58.16; claimed 2,500.00 + 70.00 + 58.16 = 2,628.16; outstanding 2,628.16 − 1,000.00
    expect(
      amounts({ principal: '2500.00', dueDate: '2025-03-31', asOf: '2025-06-30', payments: [{ amount: '1000.00', paidAt: '2025-05-01' }] }),
    ).toMatchObject({ interestRate: '12.75', interest: '58.16', claimed: '2628.16', paid: '1000.00', outstanding: '1628.16' });
  });

  it('round the summed interest once, half up: 3,650.00 for all of 2025 at 12.75 % is 465.375, shown 465.38', () => {
    // 3,650.00 × 12.75 % = 465.375 exactly (365 days ÷ 365); the half penny goes up.
    expect(amounts({ principal: '3650.00', dueDate: '2024-12-31', asOf: '2025-12-31' }).interest).toBe('465.38');
    // Rounding each day first would give 365 × 1.275 → 365 × 1.28 = 467.20 (or 1.27 → 463.55): one rounding only.
  });

  describe('take the rate of the half-year in which interest starts, fixed for the life of the case', () => {
    it.each([
      // [dueDate, interestFrom, rate, interest for 2 days on 1,000.00]
      // 1,000.00 × 12.75 % ÷ 365 × 2 = 0.6986 → 0.70
      ['2025-06-29', '2025-06-30', '12.75', '0.70'],
      // 1,000.00 × 12.25 % ÷ 365 × 2 = 0.6712 → 0.67
      ['2025-06-30', '2025-07-01', '12.25', '0.67'],
      // 1,000.00 × 13.25 % ÷ 365 × 2 = 0.7260 → 0.73
      ['2024-12-30', '2024-12-31', '13.25', '0.73'],
      ['2024-12-31', '2025-01-01', '12.75', '0.70'],
    ])('due %s: interest from %s at %s %%', (dueDate, interestFrom, rate, interest) => {
      const asOf = new Date(Date.parse(`${interestFrom}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
      expect(amounts({ principal: '1000.00', dueDate, asOf })).toMatchObject({ interestFrom, interestRate: rate, interest });
    });

    it('keeps 12.75 % after 1 July for a case whose interest started on 30 June', () => {
      // 30 Jun–31 Dec 2025 = 185 days × 1,000.00 × 12.75 % ÷ 365 = 64.6233 → 64.62 (12.25 % would give 62.09)
      expect(amounts({ principal: '1000.00', dueDate: '2025-06-29', asOf: '2025-12-31' })).toMatchObject({
        interestRate: '12.75',
        interest: '64.62',
      });
    });

    it("takes a date-time dueDate's London date: 23:30 UTC on 29 June is already 30 June in London (BST)", () => {
      // London date 2025-06-30 → interest from 1 July (2025-H2, 12.25 %); by the UTC date it would be 30 June at 12.75 %.
      expect(amounts({ principal: '1000.00', dueDate: '2025-06-29T23:30:00Z', asOf: '2025-07-02' })).toMatchObject({
        interestFrom: '2025-07-01',
        interestRate: '12.25',
        interest: '0.67',
      });
      // In winter London is on GMT: 23:30 UTC on 30 December is 30 December.
      expect(amounts({ principal: '1000.00', dueDate: '2024-12-30T23:30:00Z', asOf: '2025-01-01' }).interestFrom).toBe('2024-12-31');
    });
  });

  it('divide by 365 in a leap year too: all 366 days of 2024 on 3,650.00 at 13.25 % is 484.95', () => {
    // 3,650.00 × 13.25 % ÷ 365 = 1.325 a day × 366 days = 484.95 (not 483.6125, a year's interest)
    expect(amounts({ principal: '3650.00', dueDate: '2023-12-31', asOf: '2024-12-31' }).interest).toBe('484.95');
    // 28 Feb, 29 Feb, 1 Mar 2024: 3 days × 1.325 = 3.975 → 3.98
    expect(amounts({ principal: '3650.00', dueDate: '2024-02-27', asOf: '2024-03-01' }).interest).toBe('3.98');
  });

  describe('count a payment from the day it was made', () => {
    // 1,000.00 due 31 Jan 2025: interest from 1 Feb at 12.75 %; asOf 10 Feb (10 days).
    const base = { principal: '1000.00', dueDate: '2025-01-31', asOf: '2025-02-10' };

    it('on the first day of interest: no day is charged on the paid part', () => {
      // 10 days × 600.00 × 12.75 % ÷ 365 = 2.0959 → 2.10
      expect(amounts({ ...base, payments: [{ amount: '400.00', paidAt: '2025-02-01' }] })).toMatchObject({
        interest: '2.10',
        claimed: '1072.10',
        paid: '400.00',
        outstanding: '672.10',
      });
    });

    it('on the last day (asOf): that day is charged on the reduced principal', () => {
      // 9 days × 1,000.00 + 1 day × 600.00 = 9,600.00 pound-days × 12.75 % ÷ 365 = 3.3534 → 3.35
      expect(amounts({ ...base, payments: [{ amount: '400.00', paidAt: '2025-02-10' }] })).toMatchObject({
        interest: '3.35',
        claimed: '1073.35',
        outstanding: '673.35',
      });
    });

    it('backdated, whatever the order it was reported in', () => {
      // 1–4 Feb 4 days × 1,000.00; 5–19 Feb 15 days × 600.00; 20–28 Feb nothing unpaid:
      // 13,000.00 pound-days × 12.75 % ÷ 365 = 4.5411 → 4.54
      const payments = [
        { amount: '600.00', paidAt: '2025-02-20' },
        { amount: '400.00', paidAt: '2025-02-05' },
      ];
      expect(amounts({ ...base, asOf: '2025-02-28', payments })).toMatchObject({
        interest: '4.54',
        claimed: '1074.54',
        paid: '1000.00',
        outstanding: '74.54',
      });
    });

    it('before interest even started: no interest at all, the compensation still claimed', () => {
      expect(amounts({ ...base, payments: [{ amount: '1000.00', paidAt: '2025-01-15' }] })).toMatchObject({
        interest: '0.00',
        claimed: '1070.00',
        outstanding: '70.00',
      });
    });
  });

  describe('apply payments to principal first, then compensation, then interest', () => {
    it('a payment above the principal stops interest and leaves the rest of the compensation outstanding', () => {
      // 500.00 (band 40.00) paid 520.00 on the first day: no interest; 540.00 − 520.00 = 20.00 of compensation left.
      expect(
        amounts({ principal: '500.00', dueDate: '2025-01-31', asOf: '2025-02-10', payments: [{ amount: '520.00', paidAt: '2025-02-01' }] }),
      ).toMatchObject({ compensation: '40.00', interest: '0.00', claimed: '540.00', paid: '520.00', outstanding: '20.00' });
    });

    it('a payment of everything claimed settles the interest earned before it, and none accrues after', () => {
      // 1 Feb–1 Mar 2025 = 29 days × 500.00 × 12.75 % ÷ 365 = 5.0651 → 5.07; claimed 500.00 + 40.00 + 5.07 = 545.07
      expect(
        amounts({ principal: '500.00', dueDate: '2025-01-31', asOf: '2025-03-31', payments: [{ amount: '545.07', paidAt: '2025-03-02' }] }),
      ).toMatchObject({ interest: '5.07', claimed: '545.07', paid: '545.07', outstanding: '0.00' });
    });

    it('never shows a negative outstanding', () => {
      const pence = computeAmountsInPence(
        facts({ principal: '500.00', dueDate: '2025-01-31', asOf: '2025-02-10', payments: [{ amount: '600.00', paidAt: '2025-02-01' }] }),
      );
      expect(pence).toMatchObject({ claimed: 54_000, paid: 60_000, outstanding: 0 });
    });
  });

  describe('claim the compensation band of the principal', () => {
    it.each([
      ['0.01', '40.00'],
      ['999.99', '40.00'],
      ['1000.00', '70.00'],
      ['9999.99', '70.00'],
      ['10000.00', '100.00'],
    ])('%s → %s', (principal, compensation) => {
      // asOf = dueDate: interest has not started, so claimed is principal + compensation.
      const result = amounts({ principal, dueDate: '2025-03-31', asOf: '2025-03-31' });
      expect(result).toMatchObject({ compensation, interest: '0.00' });
      expect(toPence(Number(result.claimed))).toBe(toPence(Number(principal))! + toPence(Number(compensation))!);
    });
  });

  describe('never guess a rate that is not in the table', () => {
    it.each([
      ['2026-06-30', '2026-07-01'],
      ['2013-06-01', '2013-06-02'],
    ])('due %s (interest from %s): no rate, no interest, claimed and outstanding without it', (dueDate, interestFrom) => {
      expect(
        amounts({ principal: '1000.00', dueDate, asOf: '2026-11-26', payments: [{ amount: '100.00', paidAt: '2026-08-01' }] }),
      ).toEqual({
        principal: '1000.00',
        compensation: '70.00',
        interestFrom,
        interestRate: null,
        interest: null,
        claimed: '1070.00',
        paid: '100.00',
        outstanding: '970.00',
        asOf: '2026-11-26',
      });
    });
  });

  it('claim neither compensation nor interest when the partner chose not to (claimStatutoryInterest false)', () => {
    expect(amounts({ principal: '2500.00', dueDate: '2024-12-31', asOf: '2025-06-30', claimStatutoryInterest: false })).toEqual({
      principal: '2500.00',
      compensation: '0.00',
      interestFrom: '2025-01-01',
      interestRate: null,
      interest: '0.00',
      claimed: '2500.00',
      paid: '0.00',
      outstanding: '2500.00',
      asOf: '2025-06-30',
    });
  });

  it('refuse facts that are not money or dates rather than compute with them', () => {
    const good = facts({ principal: '1000.00', dueDate: '2025-01-31', asOf: '2025-02-10' });
    expect(() => computeAmounts({ ...good, principalPence: 10.5 })).toThrow(RangeError);
    expect(() => computeAmounts({ ...good, asOf: '2025-02-30' })).toThrow(RangeError);
    expect(() => computeAmounts({ ...good, payments: [{ amountPence: -1, paidAt: '2025-02-01' }] })).toThrow(RangeError);
    expect(() => computeAmounts({ ...good, payments: [{ amountPence: 100, paidAt: '2025-02-01T10:00:00Z' }] })).toThrow(RangeError);
    expect(() => computeAmounts({ ...good, dueDate: 'soon' })).toThrow(RangeError);
  });
});

describe('The amounts agree with a day-by-day computation in fractions', () => {
  const DAY = 86_400_000;
  const dateAt = (day: number) => new Date(day * DAY).toISOString().slice(0, 10);
  const moneyText = (pence: number) => `${Math.floor(pence / 100)}.${String(pence % 100).padStart(2, '0')}`;

  // Due dates from mid-2013 (no rate) to late 2026 (no rate again after 2026-H1); quotes up to 3 years on.
  const firstDue = Date.UTC(2013, 5, 1) / DAY;
  const lastDue = Date.UTC(2026, 9, 31) / DAY;
  const caseArbitrary = fc
    .record({
      principalPence: fc.oneof(fc.integer({ min: 1, max: 1_000_000 }), fc.constantFrom(1, 99_999, 100_000, 999_999, 1_000_000)),
      dueDay: fc.integer({ min: firstDue, max: lastDue }),
      dueTime: fc.option(fc.integer({ min: 0, max: DAY - 1 }), { nil: undefined }),
      claimStatutoryInterest: fc.boolean(),
      quoteDays: fc.integer({ min: -5, max: 3 * 366 }),
      payments: fc.array(fc.record({ fraction: fc.integer({ min: 1, max: 700 }), dayOffset: fc.integer({ min: -40, max: 3 * 366 }) }), {
        maxLength: 12,
      }),
    })
    .map((c): SlowCase & { facts: AmountFacts } => {
      const dueDate = c.dueTime === undefined ? dateAt(c.dueDay) : new Date(c.dueDay * DAY + c.dueTime).toISOString();
      const asOf = dateAt(c.dueDay + c.quoteDays);
      // Payments between 40 days before the due date and the quote date; together sometimes more than the principal.
      const payments = c.payments.map((p) => ({
        pence: Math.max(1, Math.floor((c.principalPence * p.fraction) / 1000)),
        paidAt: dateAt(c.dueDay + Math.min(p.dayOffset, c.quoteDays)),
      }));
      return {
        principalAmount: moneyText(c.principalPence),
        dueDate,
        claimStatutoryInterest: c.claimStatutoryInterest,
        payments: payments.map((p) => ({ amount: moneyText(p.pence), paidAt: p.paidAt })),
        asOf,
        facts: {
          principalPence: c.principalPence,
          dueDate,
          claimStatutoryInterest: c.claimStatutoryInterest,
          payments: payments.map((p) => ({ amountPence: p.pence, paidAt: p.paidAt })),
          asOf,
        },
      };
    });

  it('for thousands of random cases (seeded, so a failure replays)', () => {
    fc.assert(
      fc.property(caseArbitrary, (c) => {
        expect(computeAmounts(c.facts)).toEqual(slowAmounts(c));
      }),
      { seed: 20261126, numRuns: 3000 },
    );
  });
});

describe("The Case schema's example", () => {
  it('shows the amounts the service computes for its own facts', () => {
    const view = caseViewSchema.meta()!.example as CaseView;
    expect(
      computeAmounts({
        principalPence: toPence(Number(view.principalAmount))!,
        dueDate: view.dueDate,
        claimStatutoryInterest: view.claimStatutoryInterest,
        payments: [],
        asOf: view.amounts.asOf,
      }),
    ).toEqual(view.amounts);
  });
});
