import { ACTIONS_PER_CASE, CASES_PER_TRANSACTION, transactionsOf } from '../../../lib/adapters/dynamodb/case-writer.js';
import type { NewCase } from '../../../lib/cases/ports.js';

const newCase = (companyId: string, invoiceRefKey: string) => ({ stored: { companyId, invoiceRefKey } }) as unknown as NewCase;
const batch = (n: number, company = 'cmp_A') => Array.from({ length: n }, (_, i) => newCase(company, `ref-${i}`));

describe('packing a batch into transactions', () => {
  it('fits four actions a case (guard, case, audit record, event) within the 100-action limit', () => {
    expect(ACTIONS_PER_CASE).toBe(4);
    expect(CASES_PER_TRANSACTION * ACTIONS_PER_CASE).toBeLessThanOrEqual(100);
    expect(CASES_PER_TRANSACTION).toBe(25);
  });

  it.each([
    [1, [1]],
    [25, [25]],
    [26, [13, 13]],
    [51, [17, 17, 17]],
    [100, [25, 25, 25, 25]],
    [0, []],
  ])('splits %i cases into as few transactions as the limit allows, of even size', (n, sizes) => {
    const groups = transactionsOf(batch(n));
    expect(groups.map((g) => g.length)).toEqual(sizes);
    expect(groups.flat().sort((a, b) => a - b)).toEqual(Array.from({ length: n }, (_, i) => i));
  });

  it('never puts two cases with the same guard in one transaction (DynamoDB refuses two actions on one item)', () => {
    const cases = [...batch(30), newCase('cmp_A', 'ref-3'), newCase('cmp_A', 'ref-3'), newCase('cmp_B', 'ref-3')];
    const groups = transactionsOf(cases);
    for (const group of groups) {
      const guards = group.map((i) => `${cases[i]!.stored.companyId}|${cases[i]!.stored.invoiceRefKey}`);
      expect(new Set(guards).size).toBe(guards.length);
    }
    expect(groups.flat().sort((a, b) => a - b)).toEqual(cases.map((_, i) => i));
  });
});
