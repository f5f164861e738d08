import { MAX_INVOICE_REF_LENGTH } from './case-input.js';
import type { Deadline } from '../deadline.js';
import * as z from 'zod';
import type { Caller } from '../auth/authenticate-key.js';
import { InvalidRequestError, unknownFieldErrors, type FieldError } from '../errors.js';
import { isWellFormedText } from '../text.js';
import { CASE_STATUSES, caseViewSchema, RECOVERY_GATES, toCaseView, type StoredCase } from './case-record.js';
import { parseCaseDate } from './dates.js';
import { invoiceRefKey } from './invoice-ref.js';
import type { CursorSealer } from './list-cursor.js';
import type { CaseLister, CaseListFilters } from './ports.js';

/**
 * GET /api/v1/cases: a company's cases newest first, a page at a time, or every case with an
 * invoiceRef (product rules "GET /api/v1/cases", "Case lifecycle"). The query string is parsed
 * here, from the raw parameter maps the gateway hands over, so every bad parameter gets its own
 * field error.
 */
export const DEFAULT_LIST_LIMIT = 25;
export const MAX_LIST_LIMIT = 100;

export const LIST_PARAMETERS = ['invoiceRef', 'status', 'recoveryGate', 'createdFrom', 'createdBefore', 'limit', 'cursor'] as const;

export interface ListQuery {
  /** The guard key of the requested invoiceRef (trimmed, NFC, case-folded). */
  invoiceRefKey?: string;
  filters: CaseListFilters;
  limit: number;
  cursor?: string;
}

export const caseListSchema = z
  .object({
    data: z.array(caseViewSchema).meta({
      description:
        'Newest first (`createdAt` descending, then `id` descending). Each item is exactly the record `GET /api/v1/cases/{id}` returns.',
    }),
    nextCursor: z.string().nullable().meta({
      description: 'Pass as `cursor`, with the same filters, for the next page; `null` on the last page. Opaque; valid for 24 hours.',
      example: null,
    }),
  })
  .meta({ id: 'CaseList', description: 'One page of your company\u2019s cases.' });
export type CaseList = z.infer<typeof caseListSchema>;

// ---- query parsing --------------------------------------------------------------------------

const chars = (s: string) => [...s].length;

/** A date-time bound as the instant storage compares, rounded up to the millisecond `createdAt` is kept in. */
function boundInstant(text: string): string | undefined {
  const parsed = parseCaseDate(text);
  if (parsed?.kind !== 'datetime') return undefined;
  // parseCaseDate keeps milliseconds; a finer fraction rounds up, so that "from" stays inclusive
  // and "before" stays exclusive of the instant as written.
  const fraction = /\.(\d+)/.exec(text)?.[1] ?? '';
  const ms = parsed.epochMs + (/[1-9]/.test(fraction.slice(3)) ? 1 : 0);
  const iso = new Date(ms).toISOString();
  // Years outside 0000-9999 have a six-digit form that does not sort with the rest.
  return /^\d{4}-/.test(iso) ? iso : undefined;
}

/** A date-time bound parameter (`createdFrom`, `createdBefore`): the instant, in the form `createdAt` is stored in. */
export const dateTimeBound = (field: string) =>
  z
    .string()
    .transform((s, ctx) => {
      const instant = boundInstant(s);
      if (instant === undefined) {
        ctx.addIssue({
          code: 'custom',
          message: `${field} must be an ISO 8601 date-time with Z or an offset, such as 2025-03-04T10:20:30Z`,
        });
        return z.NEVER;
      }
      return instant;
    })
    .optional();

/** The `limit` parameter of every list: a whole number from 1 to MAX_LIST_LIMIT. */
export const limitParameter = z
  .string()
  .refine((s) => /^[0-9]{1,3}$/.test(s) && Number(s) >= 1 && Number(s) <= MAX_LIST_LIMIT, {
    error: `limit must be a whole number from 1 to ${MAX_LIST_LIMIT}`,
  })
  .transform(Number)
  .optional();

/** The case list's query parameters (also the source of their description in docs/openapi.json). */
export const caseListQuerySchema = z.strictObject({
  invoiceRef: z
    .string()
    .refine(isWellFormedText, { error: 'invoiceRef must be valid Unicode text (it holds an unpaired surrogate)', abort: true })
    .refine((s) => chars(s) <= MAX_INVOICE_REF_LENGTH && s.trim().length > 0, {
      error: `invoiceRef must be 1 to ${MAX_INVOICE_REF_LENGTH} characters and not blank`,
    })
    .optional(),
  status: z.enum(CASE_STATUSES, { error: `status must be one of ${CASE_STATUSES.join(', ')}` }).optional(),
  recoveryGate: z.enum(RECOVERY_GATES, { error: `recoveryGate must be one of ${RECOVERY_GATES.join(', ')}` }).optional(),
  createdFrom: dateTimeBound('createdFrom'),
  createdBefore: dateTimeBound('createdBefore'),
  limit: limitParameter,
  // Any value is accepted here; whether it is a cursor we issued is decided when it is opened.
  cursor: z.string().optional(),
});

export type QueryParameters = Record<string, string | undefined> | null | undefined;
export type MultiValueQueryParameters = Record<string, string[] | undefined> | null | undefined;

/**
 * A list's query from the gateway's parameter maps, checked against the list's own parameters
 * and schema (the case list, the event list). API Gateway puts the last value of a repeated
 * parameter in the single map and all of them in the multi-value map; a repeat is refused rather
 * than silently taking one. `createdBefore` must be later than `createdFrom`. Every problem is
 * reported at once, as one InvalidRequestError.
 */
// Every list has a limit and a cursor (naming them keeps the constraint from being a weak type a list without dates could not meet).
export function parseQueryParameters<Output extends { limit?: number; cursor?: string; createdFrom?: string; createdBefore?: string }>(
  single: QueryParameters,
  multi: MultiValueQueryParameters,
  parameters: readonly string[],
  schema: z.ZodType<Output>,
): Output {
  const values: Record<string, string> = {};
  const names = new Set([...Object.keys(single ?? {}), ...Object.keys(multi ?? {})]);
  const errors: FieldError[] = [];
  const unknown: string[] = [];
  for (const name of names) {
    if (!parameters.includes(name)) {
      unknown.push(name);
      continue;
    }
    const one = single?.[name];
    const all = multi?.[name] ?? (one === undefined ? [] : [one]);
    if (all.length > 1) {
      errors.push({ field: name, message: `${name} must be given at most once` });
      continue;
    }
    const value = all[0] ?? one;
    if (value !== undefined) values[name] = value;
  }
  const parsed = schema.safeParse(values);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) errors.push({ field: String(issue.path[0] ?? 'query'), message: issue.message });
  }
  if (parsed.success) {
    const { createdFrom, createdBefore } = parsed.data;
    if (createdFrom !== undefined && createdBefore !== undefined && createdFrom >= createdBefore) {
      errors.push({ field: 'createdBefore', message: 'createdBefore must be later than createdFrom' });
    }
  }
  errors.push(...unknownFieldErrors(unknown, (name) => `${name} is not a query parameter of this operation; use ${parameters.join(', ')}`));
  if (errors.length > 0 || !parsed.success) {
    throw new InvalidRequestError('The query string is invalid; see "errors" for every parameter to fix.', errors);
  }
  return parsed.data;
}

/** The case list's query (GET /api/v1/cases). */
export function parseListQuery(single: QueryParameters, multi: MultiValueQueryParameters): ListQuery {
  const q = parseQueryParameters(single, multi, LIST_PARAMETERS, caseListQuerySchema);
  const filters: CaseListFilters = {
    ...(q.status !== undefined ? { status: q.status } : {}),
    ...(q.recoveryGate !== undefined ? { recoveryGate: q.recoveryGate } : {}),
    ...(q.createdFrom !== undefined ? { createdFrom: q.createdFrom } : {}),
    ...(q.createdBefore !== undefined ? { createdBefore: q.createdBefore } : {}),
  };
  return {
    ...(q.invoiceRef !== undefined ? { invoiceRefKey: invoiceRefKey(q.invoiceRef) } : {}),
    filters,
    limit: q.limit ?? DEFAULT_LIST_LIMIT,
    ...(q.cursor !== undefined ? { cursor: q.cursor } : {}),
  };
}

/** The filters a cursor is bound to, in one canonical string (the limit may change between pages). */
export function filterBinding(query: Pick<ListQuery, 'invoiceRefKey' | 'filters'>): string {
  const { status, recoveryGate, createdFrom, createdBefore } = query.filters;
  return JSON.stringify([query.invoiceRefKey ?? null, status ?? null, recoveryGate ?? null, createdFrom ?? null, createdBefore ?? null]);
}

// ---- the use case ---------------------------------------------------------------------------

export interface ListCasesDeps {
  lister: CaseLister;
  cursors: CursorSealer;
  now: () => Date;
}

function matches(stored: StoredCase, filters: CaseListFilters): boolean {
  return (
    (filters.status === undefined || stored.status === filters.status) &&
    (filters.recoveryGate === undefined || stored.recoveryGate === filters.recoveryGate) &&
    (filters.createdFrom === undefined || stored.createdAt >= filters.createdFrom) &&
    (filters.createdBefore === undefined || stored.createdAt < filters.createdBefore)
  );
}

/**
 * A page of the caller's cases. With `invoiceRef` it is the strongly consistent look-up of every
 * case with that invoiceRef (the one holding it, and the withdrawn ones that gave it up), newest
 * first, in one page with the other filters applied (never a next page); otherwise a page of the list, whose
 * cursor is sealed to this company and these filters. Another company's case never appears.
 */
export async function listCases(
  deps: ListCasesDeps,
  caller: Pick<Caller, 'companyId' | 'mode'>,
  query: ListQuery,
  deadline?: Deadline,
): Promise<CaseList> {
  const now = deps.now();
  // A cursor is sealed to its mode too: a test cursor is refused from a live key like a foreign one.
  const binding = { companyId: caller.companyId, mode: caller.mode, filters: filterBinding(query) };
  // A cursor is checked even beside an invoiceRef: it was never issued for one, so it is refused.
  const position = query.cursor === undefined ? undefined : deps.cursors.open(query.cursor, binding, now);

  if (query.invoiceRefKey !== undefined) {
    const found = await deps.lister.findByInvoiceRef(caller.mode, caller.companyId, query.invoiceRefKey, deadline);
    // Every case with the invoiceRef (at most one not WITHDRAWN), newest first, in one page: the limit does not cut it.
    const data = found
      .filter((c) => c.companyId === caller.companyId && c.mode === caller.mode && matches(c, query.filters))
      .map((c) => toCaseView(c, { now }));
    return { data, nextCursor: null };
  }

  const page = await deps.lister.page(
    { mode: caller.mode, companyId: caller.companyId, filters: query.filters, limit: query.limit, ...(position ? { position } : {}) },
    deadline,
  );
  // The lister answers from storage; the tenancy rule is kept here too, whatever a key scheme says.
  const data = page.cases.filter((c) => c.companyId === caller.companyId && c.mode === caller.mode).map((c) => toCaseView(c, { now }));
  return { data, nextCursor: page.next ? deps.cursors.seal({ ...binding, position: page.next }, now) : null };
}
