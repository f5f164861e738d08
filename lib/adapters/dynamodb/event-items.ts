import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { CaseEvent } from '../../cases/case-lifecycle.js';
import type { Mode } from '../../mode.js';
import { attributeMap } from './attribute-values.js';
import { EVENT_RETENTION_SECONDS, ITEM_TYPES, keys } from './table-keys.js';

/**
 * The one shape of an event item (the transactional outbox, table-keys.ts): the create path and
 * every case change write it inside their own transactions, the event routes read it, and the
 * stream consumers take it from the stream. The event is kept as its JSON text (`payload`), so
 * what a partner reads and what a webhook delivers are the same bytes; the attributes beside it
 * are what the listing and IAM need.
 */
export interface EventItemFields {
  eventId: string;
  eventType: CaseEvent['type'];
  companyId: string;
  caseId: string;
  mode: Mode;
  createdAt: string;
  payload: string;
  ttl: number;
}

export function eventItemFields(event: CaseEvent, companyId: string, mode: Mode): EventItemFields {
  return {
    eventId: event.id,
    eventType: event.type,
    companyId,
    caseId: event.data.object.id,
    mode,
    createdAt: event.createdAt,
    payload: JSON.stringify(event),
    ttl: Math.floor(Date.parse(event.createdAt) / 1000) + EVENT_RETENTION_SECONDS,
  };
}

/** The event item in DynamoDB's AttributeValue form (a Put inside a TransactWriteItems). */
export function eventItem(event: CaseEvent, companyId: string, mode: Mode): Record<string, AttributeValue> {
  const fields = eventItemFields(event, companyId, mode);
  return attributeMap(
    keys.withTestDataListing(mode, companyId, keys.event(mode, event.id)),
    keys.eventListing(mode, companyId, fields.caseId, fields.createdAt, event.id),
    { type: ITEM_TYPES.event },
    fields,
  );
}

/** The event of an item read back (DocumentClient form); the payload is what was written. */
export function eventFromItem(item: Record<string, unknown>): { event: CaseEvent; payload: string; companyId: string; mode: Mode } {
  return {
    event: JSON.parse(String(item.payload)) as CaseEvent,
    payload: String(item.payload),
    companyId: String(item.companyId),
    mode: item.mode === 'test' ? 'test' : 'live',
  };
}
