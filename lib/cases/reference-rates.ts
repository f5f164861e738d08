/**
 * The reference rates of the Late Payment of Commercial Debts (Interest) Act 1998, as data.
 *
 * Source: the Bank of England's published Bank Rate history
 * (https://www.bankofengland.co.uk/boeapps/database/Bank-Rate.asp). Under the Late Payment of
 * Commercial Debts (Rate of Interest) (No. 3) Order 2002 the reference rate of a half-year is
 * Bank Rate in force on the day before it starts: 31 December for January–June (`H1`), 30 June for
 * July–December (`H2`). Statutory interest is that rate plus 8 percentage points
 * (lib/cases/compute-amounts.ts).
 *
 * Values are basis points (0.50 % is 50): no binary fraction ever enters a money figure.
 *
 * Adding a half-year (docs/deploy.md, "Adding a reference rate"): read Bank Rate on the reference
 * day, add one line below, deploy. A half-year missing here is never guessed: a case whose
 * interest starts in it shows `interestRate` and `interest` as null, and the functions that create
 * or read such a case publish `ReferenceRateMissing`, which the stack's alarm of that name watches.
 */
export const REFERENCE_RATES_BASIS_POINTS: Readonly<Record<string, number>> = {
  '2014-H1': 50,
  '2014-H2': 50,
  '2015-H1': 50,
  '2015-H2': 50,
  '2016-H1': 50,
  '2016-H2': 50,
  '2017-H1': 25,
  '2017-H2': 25,
  '2018-H1': 50,
  '2018-H2': 50,
  '2019-H1': 75,
  '2019-H2': 75,
  '2020-H1': 75,
  '2020-H2': 10,
  '2021-H1': 10,
  '2021-H2': 10,
  '2022-H1': 25,
  '2022-H2': 125,
  '2023-H1': 350,
  '2023-H2': 500,
  '2024-H1': 525,
  '2024-H2': 525,
  '2025-H1': 475,
  '2025-H2': 425,
  '2026-H1': 375,
};

/** The half-year (`2025-H1`: 1 Jan–30 Jun, `2025-H2`: 1 Jul–31 Dec) a `YYYY-MM-DD` date falls in. */
export function halfYearOf(date: string): string {
  return `${date.slice(0, 4)}-${date.slice(5, 7) <= '06' ? 'H1' : 'H2'}`;
}

/** The reference rate, in basis points, of the half-year containing `date`; undefined when it is not known yet. */
export function referenceRateFor(date: string): number | undefined {
  const halfYear = halfYearOf(date);
  return Object.hasOwn(REFERENCE_RATES_BASIS_POINTS, halfYear) ? REFERENCE_RATES_BASIS_POINTS[halfYear] : undefined;
}

/** Whether the table holds the rate of the half-year containing `date` (`YYYY-MM-DD`): what the operator alarm watches. */
export function hasReferenceRateFor(date: string): boolean {
  return referenceRateFor(date) !== undefined;
}
