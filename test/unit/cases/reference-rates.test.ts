import {
  FIRST_REFERENCE_HALF_YEAR,
  awaitsReferenceRateFor,
  halfYearOf,
  referenceRateFor,
  REFERENCE_RATES_BASIS_POINTS,
} from '../../../lib/cases/reference-rates.js';

describe('The reference-rate table', () => {
  it('holds exactly the half-years of the product rules, at Bank Rate on 31 December / 30 June (basis points)', () => {
    // Product rules, "Recovery and money": 2014-H1 to 2016-H2 0.50; 2017 0.25; 2018 0.50; 2019 0.75; 2020-H1 0.75;
    // 2020-H2 to 2021-H2 0.10; 2022-H1 0.25; 2022-H2 1.25; 2023-H1 3.50; 2023-H2 5.00; 2024 5.25; 2025-H1 4.75;
    // 2025-H2 4.25; 2026-H1 3.75.
    expect(REFERENCE_RATES_BASIS_POINTS).toEqual({
      ...Object.fromEntries(['2014', '2015', '2016'].flatMap((y) => [`${y}-H1`, `${y}-H2`]).map((h) => [h, 50])),
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
    });
  });

  it('puts 1 January–30 June in H1 and 1 July–31 December in H2', () => {
    expect(['2025-01-01', '2025-06-30', '2025-07-01', '2025-12-31'].map(halfYearOf)).toEqual(['2025-H1', '2025-H1', '2025-H2', '2025-H2']);
  });

  it('tells the operator alarm whether the half-year containing a date awaits a rate an operator adds', () => {
    expect(awaitsReferenceRateFor('2026-06-30')).toBe(false);
    expect(awaitsReferenceRateFor('2026-07-01')).toBe(true);
    expect(awaitsReferenceRateFor('2014-01-01')).toBe(false);
    // Before the table: no rate either (interest null, never guessed), but nothing an operator adds, so no alarm.
    expect(referenceRateFor('2013-12-31')).toBeUndefined();
    expect(awaitsReferenceRateFor('2013-12-31')).toBe(false);
    expect(awaitsReferenceRateFor('1999-03-01')).toBe(false);
    expect(FIRST_REFERENCE_HALF_YEAR).toBe('2014-H1');
  });
});
