import { icuLondonDate, londonDate, LONDON_RULE_YEARS } from '../../../lib/cases/dates.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

describe("London's date", () => {
  it('is what ICU says late every evening and just after midnight of every day in the years the rule covers', () => {
    // The clocks change at 01:00 UTC, so the date can only differ between 23:00 and midnight UTC: each day is checked there.
    const mismatches: string[] = [];
    for (let day = Date.UTC(LONDON_RULE_YEARS.from, 0, 1); day <= Date.UTC(LONDON_RULE_YEARS.to, 11, 31); day += DAY) {
      for (const t of [day + 22 * HOUR + 59 * 60_000, day + 23 * HOUR, day + 23 * HOUR + 30 * 60_000, day + 30 * 60_000]) {
        if (londonDate(t) !== icuLondonDate(t)) mismatches.push(new Date(t).toISOString());
      }
    }
    expect(mismatches).toEqual([]);
  });

  it('is asked of ICU outside those years', () => {
    // 1968-10-27 to 1971-10-31 London kept GMT+1 all year (British Standard Time): no rule here knows that.
    const winter1970 = Date.UTC(1970, 0, 15, 23, 30);
    expect(londonDate(winter1970)).toBe(icuLondonDate(winter1970));
    expect(londonDate(winter1970)).toBe('1970-01-16');
    const far = Date.UTC(2150, 6, 1, 23, 30);
    expect(londonDate(far)).toBe(icuLondonDate(far));
  });

  it('moves to the next day at 23:00 UTC in summer time and at midnight UTC in winter (2026: clocks change 29 March and 25 October)', () => {
    expect(londonDate(Date.UTC(2026, 2, 28, 23, 30))).toBe('2026-03-28');
    expect(londonDate(Date.UTC(2026, 2, 29, 23, 30))).toBe('2026-03-30');
    expect(londonDate(Date.UTC(2026, 9, 24, 23, 30))).toBe('2026-10-25');
    expect(londonDate(Date.UTC(2026, 9, 25, 23, 30))).toBe('2026-10-25');
  });
});
