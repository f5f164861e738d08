import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { computeAmounts } from '../../../lib/cases/compute-amounts.js';
import { toPence } from '../../../lib/cases/money.js';
import { REFERENCE_RATES_BASIS_POINTS } from '../../../lib/cases/reference-rates.js';

/**
 * docs/api.md, "Amounts": the worked example a partner redoes with a calculator. Its inputs and
 * every figure are read out of the document and held to the module, so the two cannot drift.
 */
const api = readFileSync(path.join(__dirname, '../../../docs/api.md'), 'utf8');
const section = api.slice(api.indexOf('### A worked example'), api.indexOf('## Withdraw a case'));
const example = JSON.parse(/```json\n([\s\S]*?)\n```/.exec(section)![1]!) as {
  principalAmount: string;
  dueDate: string;
  claimStatutoryInterest: boolean;
  payments: { amount: string; paidAt: string }[];
  amounts: Record<string, string | null>;
};
const pence = (pounds: string) => toPence(Number(pounds.replace(/,/g, '')))!;

describe('The worked example of docs/api.md', () => {
  it('shows the amounts the service computes from its facts', () => {
    expect(
      computeAmounts({
        principalPence: pence(example.principalAmount),
        dueDate: example.dueDate,
        claimStatutoryInterest: example.claimStatutoryInterest,
        payments: example.payments.map((p) => ({ amountPence: pence(p.amount), paidAt: p.paidAt })),
        asOf: example.amounts.asOf!,
      }),
    ).toEqual(example.amounts);
  });

  it("states the half-year's reference rate from the table, plus 8.00", () => {
    const [, halfYear, reference, rate] = /in (\d{4}-H[12]): reference rate (\d+\.\d{2}) \+ 8\.00 = (\d+\.\d{2})/.exec(section)!;
    expect(pence(reference!)).toBe(REFERENCE_RATES_BASIS_POINTS[halfYear!]);
    expect(rate).toBe(example.amounts.interestRate);
  });

  it('works the interest out line by line: each line right to four decimals, the days adding up, the total rounding to the interest', () => {
    const lines = [...section.matchAll(/\| ([\d,]+\.\d{2}) × (\d+\.\d{2}) % ÷ 365 × (\d+) = (\d+\.\d{4}) \|/g)];
    expect(lines.length).toBeGreaterThan(1);
    let days = 0;
    let sumTenThousandths = 0n;
    for (const [, principal, rate, dayCount, shown] of lines) {
      // pence × basis points × days ÷ 3,650,000 is pence; × 100 (four decimals of pounds) ÷ 100 (pounds): ÷ 36,500, half up.
      const exact = BigInt(pence(principal!)) * BigInt(pence(rate!)) * BigInt(dayCount!);
      const tenThousandths = (2n * exact + 36_500n) / 73_000n;
      expect(shown).toBe(`${tenThousandths / 10_000n}.${String(tenThousandths % 10_000n).padStart(4, '0')}`);
      days += Number(dayCount);
      sumTenThousandths += tenThousandths;
    }
    const from = Date.parse(`${example.amounts.interestFrom}T00:00:00Z`);
    const to = Date.parse(`${example.amounts.asOf}T00:00:00Z`);
    expect(days).toBe((to - from) / 86_400_000 + 1);
    const total = /total (\d+\.\d{4}), rounded: (\d+\.\d{2})/.exec(section)!;
    expect(total[1]).toBe(`${sumTenThousandths / 10_000n}.${String(sumTenThousandths % 10_000n).padStart(4, '0')}`);
    expect(total[2]).toBe(example.amounts.interest);
  });

  it('adds up claimed and outstanding as written', () => {
    const claimed = /`claimed` = ([\d,]+\.\d{2}) \+ ([\d,]+\.\d{2}) \+ ([\d,]+\.\d{2}) = ([\d,]+\.\d{2})/.exec(section)!;
    expect([claimed[1], claimed[2], claimed[3], claimed[4]].map((x) => pence(x!))).toEqual(
      [example.amounts.principal, example.amounts.compensation, example.amounts.interest, example.amounts.claimed].map((x) => pence(x!)),
    );
    const outstanding = /`outstanding` = ([\d,]+\.\d{2}) −\s+([\d,]+\.\d{2}) = ([\d,]+\.\d{2})/.exec(section)!;
    expect([outstanding[1], outstanding[2], outstanding[3]].map((x) => pence(x!))).toEqual(
      [example.amounts.claimed, example.amounts.paid, example.amounts.outstanding].map((x) => pence(x!)),
    );
  });
});
