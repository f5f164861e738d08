import { REFERENCE_RATES_BASIS_POINTS } from '../../lib/cases/reference-rates.js';

/**
 * Dates around the end of the reference-rate table, derived from the table itself so a test
 * keeps meaning the same when an operator adds a half-year (docs/deploy.md, "Adding a reference
 * rate").
 */
export function referenceRateGap(): { firstDayWithout: string; lastDayWith: string; dayAfter: (days: number) => string } {
  const last = Object.keys(REFERENCE_RATES_BASIS_POINTS).sort().at(-1)!;
  const year = Number(last.slice(0, 4));
  const firstDayWithout = last.endsWith('H1') ? `${year}-07-01` : `${year + 1}-01-01`;
  const dayAfter = (days: number) => new Date(Date.parse(`${firstDayWithout}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
  return { firstDayWithout, lastDayWith: dayAfter(-1), dayAfter };
}
