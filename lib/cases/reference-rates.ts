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
 * or read such a case publish `ReferenceRateMissing`, which the stack's alarm of that name watches
 * (for half-years from the table's first on: awaitsReferenceRateFor).
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

/** The first half-year the table holds: the product ships the rates from there on (product rules, "Recovery and money"). */
export const FIRST_REFERENCE_HALF_YEAR = Object.keys(REFERENCE_RATES_BASIS_POINTS).sort()[0]!;

/**
 * Whether the half-year containing `date` (`YYYY-MM-DD`) awaits its rate: one from the table's first
 * on that it does not hold yet (the next half-year before an operator adds it, or one left out),
 * which the operator alarm watches. A half-year before the table has no rate either (interest null,
 * never guessed), but no operator adds it: counted, it would let any partner hold the alarm in ALARM
 * for ever with one invoice due in 2013, and a real missing rate would then page no one.
 */
export function awaitsReferenceRateFor(date: string): boolean {
  return halfYearOf(date) >= FIRST_REFERENCE_HALF_YEAR && referenceRateFor(date) === undefined;
}
