import * as z from 'zod';
import type { Caller } from '../auth/authenticate-key.js';
import type { Deadline } from '../deadline.js';
import { NotFoundError } from '../errors.js';
import { CASE_EVENT_TYPES, caseEventSchema, EVENT_ID_PATTERN, type CaseEvent } from './case-lifecycle.js';
import { CASE_ID_PATTERN } from './case-record.js';
import { isRetained, retainedFrom } from './event-retention.js';
import {
  DEFAULT_LIST_LIMIT,
  dateTimeBound,
  limitParameter,
  parseQueryParameters,
  type MultiValueQueryParameters,
  type QueryParameters,
} from './list-cases.js';
import type { CursorSealer } from './list-cursor.js';
import type { EventListFilters, EventLister, StoredEvent } from './ports.js';

/**
 * GET /api/v1/events and GET /api/v1/events/{id} (product rules "Events"): a company's events of
 * its mode, newest first, with the case list's paging and cursor rules (list-cases.ts,
 * list-cursor.ts), and one event by id. Events are kept 30 days (event-retention.ts): an older one
 * is neither listed nor read, even while storage still holds it.
 */
export const EVENT_LIST_PARAMETERS = ['type', 'caseId', 'createdFrom', 'createdBefore', 'limit', 'cursor'] as const;

export const EVENT_NOT_FOUND_DETAIL = 'No event with this id exists for your company (events are kept 30 days).';

export interface EventListQuery {
  /** The partner's filters, as given (the cursor is bound to these). */
  filters: EventListFilters;
  limit: number;
  cursor?: string;
}

export const eventListSchema = z
  .object({
    data: z.array(caseEventSchema).meta({
      description:
        'Newest first (`createdAt` descending, then `id` descending). Each item is exactly the event `GET /api/v1/events/{id}` returns.',
    }),
    nextCursor: z.string().nullable().meta({
      description: 'Pass as `cursor`, with the same filters, for the next page; `null` on the last page. Opaque; valid for 24 hours.',
      example: null,
    }),
  })
  .meta({ id: 'EventList', description: 'One page of your company\u2019s events.' });
export type EventList = z.infer<typeof eventListSchema>;

/** The event list's query parameters (also the source of their description in docs/openapi.json). */
export const eventListQuerySchema = z.strictObject({
  type: z.enum(CASE_EVENT_TYPES, { error: `type must be one of ${CASE_EVENT_TYPES.join(', ')}` }).optional(),
  caseId: z
    .string()
    .regex(CASE_ID_PATTERN, { error: 'caseId must be a case id as returned in created[].id, such as case_7Gk2mP9qR4sT8vW1xY3zA5' })
    .optional(),
  createdFrom: dateTimeBound('createdFrom'),
  createdBefore: dateTimeBound('createdBefore'),
  limit: limitParameter,
  // Any value is accepted here; whether it is a cursor we issued is decided when it is opened.
  cursor: z.string().optional(),
});

/** The event list's query; every bad, unknown or repeated parameter is reported at once (400 INVALID_REQUEST). */
export function parseEventListQuery(single: QueryParameters, multi: MultiValueQueryParameters): EventListQuery {
  const q = parseQueryParameters(single, multi, EVENT_LIST_PARAMETERS, eventListQuerySchema);
  return {
    filters: {
      ...(q.type !== undefined ? { type: q.type } : {}),
      ...(q.caseId !== undefined ? { caseId: q.caseId } : {}),
      ...(q.createdFrom !== undefined ? { createdFrom: q.createdFrom } : {}),
      ...(q.createdBefore !== undefined ? { createdBefore: q.createdBefore } : {}),
    },
    limit: q.limit ?? DEFAULT_LIST_LIMIT,
    ...(q.cursor !== undefined ? { cursor: q.cursor } : {}),
  };
}

/**
 * The filters an event cursor is bound to. An object, where the case list's binding is an array
 * (list-cases.ts `filterBinding`): a case list's cursor is never accepted here, nor the other way round.
 */
export function eventFilterBinding(filters: EventListFilters): string {
  const { type, caseId, createdFrom, createdBefore } = filters;
  return JSON.stringify({ events: [type ?? null, caseId ?? null, createdFrom ?? null, createdBefore ?? null] });
}

export interface ListEventsDeps {
  lister: EventLister;
  cursors: CursorSealer;
  now: () => Date;
}

/** Whether a stored event is the caller's to see: its company's, its mode's, and within its 30 days (webhook redelivery asks too). */
export const eventVisibleTo = (caller: Pick<Caller, 'companyId' | 'mode'>, found: StoredEvent, now: Date) =>
  found.companyId === caller.companyId && found.mode === caller.mode && isRetained(found.event.createdAt, now);

/** A page of the caller's events; the cursor is sealed to this company, mode and these filters. */
export async function listEvents(
  deps: ListEventsDeps,
  caller: Pick<Caller, 'companyId' | 'mode'>,
  query: EventListQuery,
  deadline?: Deadline,
): Promise<EventList> {
  const now = deps.now();
  const binding = { companyId: caller.companyId, mode: caller.mode, filters: eventFilterBinding(query.filters) };
  const position = query.cursor === undefined ? undefined : deps.cursors.open(query.cursor, binding, now);
  // Storage reads only the retained range: the lower bound is the later of the partner's
  // createdFrom and the retention's start (the cursor stays bound to the partner's own filters).
  const oldest = retainedFrom(now);
  const createdFrom = query.filters.createdFrom !== undefined && query.filters.createdFrom > oldest ? query.filters.createdFrom : oldest;
  const page = await deps.lister.page(
    {
      mode: caller.mode,
      companyId: caller.companyId,
      filters: { ...query.filters, createdFrom },
      limit: query.limit,
      ...(position ? { position } : {}),
    },
    deadline,
  );
  // The tenancy and retention rules are kept here too, whatever a key scheme or a key condition says.
  const data = page.events.filter((e) => eventVisibleTo(caller, e, now)).map((e) => e.event);
  return { data, nextCursor: page.next ? deps.cursors.seal({ ...binding, position: page.next }, now) : null };
}

/** The id to look up, or undefined when it cannot name any event (no storage read is worth making). */
export function eventIdToRead(id: string | undefined): string | undefined {
  return id !== undefined && EVENT_ID_PATTERN.test(id) ? id : undefined;
}

/**
 * Tenancy and retention for an event read: another company's or mode's event, and one past its
 * 30 days, are answered exactly like a missing one. The read itself is started by the caller, in
 * parallel with authentication.
 */
export function authoriseEventRead(caller: Pick<Caller, 'companyId' | 'mode'>, found: StoredEvent | undefined, now: Date): CaseEvent {
  if (!found || !eventVisibleTo(caller, found, now)) throw new NotFoundError(EVENT_NOT_FOUND_DETAIL);
  return found.event;
}
