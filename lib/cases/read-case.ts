import type { Caller } from '../auth/authenticate-key.js';
import { InvalidRequestError, NotFoundError } from '../errors.js';
import { CASE_ID_PATTERN, toCaseView, type AmountsAt, type CaseView, type StoredCase } from './case-record.js';
import { londonDate, parseCaseDate } from './dates.js';
import type { MultiValueQueryParameters, QueryParameters } from './list-cases.js';

export const CASE_NOT_FOUND_DETAIL = 'No case with this id exists for your company.';

/** The id to look up, or undefined when it cannot name any case (no storage read is worth making). */
export function caseIdToRead(id: string | undefined): string | undefined {
  return id !== undefined && CASE_ID_PATTERN.test(id) ? id : undefined;
}

/**
 * Tenancy rule for reads: another company's case is answered exactly like a missing one (same
 * error, same body, and the same storage work, since both paths did the one lookup). The lookup
 * itself is started by the caller, in parallel with authentication (one round trip in all).
 */
export function authoriseCaseRead(caller: Pick<Caller, 'companyId' | 'mode'>, found: StoredCase | undefined, at: AmountsAt = {}): CaseView {
  // The lookup was made in the caller's mode (the mode is in the storage key); the comparison
  // here is a second fence, not the separation itself.
  if (!found || found.companyId !== caller.companyId || found.mode !== caller.mode) throw new NotFoundError(CASE_NOT_FOUND_DETAIL);
  return toCaseView(found, at);
}

/** How far ahead a settlement quote may look (product rules: today to 365 days ahead). */
export const MAX_QUOTE_DAYS_AHEAD = 365;

const DAY_MS = 86_400_000;

/**
 * `?asOf=YYYY-MM-DD` of GET /api/v1/cases/{id}: the date an open case's amounts are quoted for,
 * from today in Europe/London to MAX_QUOTE_DAYS_AHEAD days ahead. Absent: undefined (today).
 * Anything else (another form, an impossible date, a date out of range, the parameter repeated)
 * is refused, never quietly replaced by today. Other parameters are left alone, as before.
 */
export function parseQuoteAsOf(single: QueryParameters, multi: MultiValueQueryParameters, now: Date): string | undefined {
  const all = multi?.asOf ?? (single?.asOf === undefined ? [] : [single.asOf]);
  if (all.length === 0) return undefined;
  const refuse = (message: string): never => {
    throw new InvalidRequestError('The query string is invalid; see "errors" for every parameter to fix.', [{ field: 'asOf', message }]);
  };
  if (all.length > 1) return refuse('asOf must be given at most once');
  const value = all[0]!;
  if (parseCaseDate(value)?.kind !== 'date') return refuse('asOf must be a real date as YYYY-MM-DD');
  const today = londonDate(now.getTime());
  const latest = new Date(Date.parse(`${today}T00:00:00Z`) + MAX_QUOTE_DAYS_AHEAD * DAY_MS).toISOString().slice(0, 10);
  if (value < today || value > latest) return refuse(`asOf must be a date from today (${today}, Europe/London) to ${latest}`);
  return value;
}
