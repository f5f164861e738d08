/**
 * Dates in case inputs: either a calendar date `YYYY-MM-DD` (a date in Europe/London, where the
 * claims are brought) or an ISO 8601 date-time with `Z` or a numeric offset. Impossible dates
 * (2025-02-30, 24:00, month 13) are refused.
 *
 * Comparisons follow the product rules:
 * - "dueDate in the past": a date-only dueDate must be before today's date in Europe/London; a
 *   date-time must be before now.
 * - "invoiceDate not after dueDate": two date-times compare as instants; when either is date-only
 *   both compare as Europe/London calendar dates (a date-time counts as the London date it falls
 *   on), so an invoice dated 2025-03-01 due at 2025-03-01T09:00:00Z is not "after".
 */
export type CaseDate = { kind: 'date'; date: string } | { kind: 'datetime'; epochMs: number; londonDate: string };

const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
/** The date-time form: seconds and their fraction optional, `Z` or an offset required. */
export const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:\d{2})$/;
/** Both accepted forms in one pattern (for the API description); `parseCaseDate` also checks the calendar. */
export const CASE_DATE_PATTERN = new RegExp(`${DATE_ONLY.source}|${DATE_TIME.source}`);

/**
 * Europe/London's clock since 1996: GMT, and BST (GMT+1) from 01:00 UTC on the last Sunday of
 * March to 01:00 UTC on the last Sunday of October (the Summer Time Order 2002, unchanged since
 * the 1996 harmonisation). Computed here because the first Intl.DateTimeFormat of a process costs
 * about 15 ms (loading ICU's data), a tenth of create-cases' cold start, and every create asks for
 * today's London date. Before 1996 ICU answers. Within the range this rule, not the runtime's
 * time-zone data, decides: should the UK change its summer time before 2040, this code must
 * change with it. `test/unit/cases/dates.test.ts` holds the rule to ICU's answer for every day of
 * the range, so the first Node whose data carries such a change fails it.
 */
export const LONDON_RULE_YEARS = { from: 1996, to: 2040 } as const;

/** 01:00 UTC on the last Sunday of a month (0-based), when British Summer Time starts or ends. */
function lastSundayOneAmUtc(year: number, monthIndex: number): number {
  const lastDay = new Date(Date.UTC(year, monthIndex + 1, 0));
  return Date.UTC(year, monthIndex, lastDay.getUTCDate() - lastDay.getUTCDay(), 1);
}

let icuFormatter: Intl.DateTimeFormat | undefined;

/** The London date by ICU's time-zone data (years outside LONDON_RULE_YEARS). */
export function icuLondonDate(epochMs: number): string {
  icuFormatter ??= new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/London', year: 'numeric', month: '2-digit', day: '2-digit' });
  const parts = icuFormatter.formatToParts(new Date(epochMs));
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  return `${get('year')}-${get('month')}-${get('day')}`;
}

/** The calendar date (YYYY-MM-DD) in Europe/London at an instant. */
export function londonDate(epochMs: number): string {
  const year = new Date(epochMs).getUTCFullYear();
  if (!(year >= LONDON_RULE_YEARS.from && year <= LONDON_RULE_YEARS.to)) return icuLondonDate(epochMs);
  const summer = epochMs >= lastSundayOneAmUtc(year, 2) && epochMs < lastSundayOneAmUtc(year, 9);
  return new Date(summer ? epochMs + 3_600_000 : epochMs).toISOString().slice(0, 10);
}

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

function validCalendarDate(year: number, month: number, day: number): boolean {
  return year >= 1 && month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month);
}

/** Parses a case date; undefined when it is not one of the two accepted forms or impossible. */
export function parseCaseDate(text: string): CaseDate | undefined {
  const dateOnly = DATE_ONLY.exec(text);
  if (dateOnly) {
    const [, y, m, d] = dateOnly.map(Number) as [number, number, number, number];
    return validCalendarDate(y, m, d) ? { kind: 'date', date: text } : undefined;
  }
  const dt = DATE_TIME.exec(text);
  if (!dt) return undefined;
  const [, ys, ms, ds, hs, mins, ss, frac, offset] = dt as unknown as [
    string,
    string,
    string,
    string,
    string,
    string,
    string | undefined,
    string | undefined,
    string,
  ];
  const [y, mo, d, h, mi, s] = [ys, ms, ds, hs, mins, ss ?? '0'].map(Number) as [number, number, number, number, number, number];
  if (!validCalendarDate(y, mo, d) || h > 23 || mi > 59 || s > 59) return undefined;
  let offsetMinutes = 0;
  if (offset !== 'Z') {
    const sign = offset.startsWith('-') ? -1 : 1;
    const oh = Number(offset.slice(1, 3));
    const om = Number(offset.slice(4, 6));
    if (oh > 23 || om > 59) return undefined;
    offsetMinutes = sign * (oh * 60 + om);
  }
  const millis = frac ? Number(frac.padEnd(3, '0').slice(0, 3)) : 0;
  const utc = new Date(0);
  utc.setUTCFullYear(y, mo - 1, d);
  utc.setUTCHours(h, mi, s, millis);
  const epochMs = utc.getTime() - offsetMinutes * 60_000;
  if (!Number.isFinite(epochMs)) return undefined;
  return { kind: 'datetime', epochMs, londonDate: londonDate(epochMs) };
}

function calendarDate(value: CaseDate): string {
  return value.kind === 'date' ? value.date : value.londonDate;
}

/** True when `a` is after `b` under the mixed-precision rule above. */
export function isAfter(a: CaseDate, b: CaseDate): boolean {
  if (a.kind === 'datetime' && b.kind === 'datetime') return a.epochMs > b.epochMs;
  return calendarDate(a) > calendarDate(b);
}

/** True when the date lies in the past at `now` (date-only: before today's London date). */
export function isInPast(value: CaseDate, now: Date): boolean {
  if (value.kind === 'datetime') return value.epochMs < now.getTime();
  return value.date < londonDate(now.getTime());
}
