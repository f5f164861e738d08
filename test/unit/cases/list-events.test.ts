import { EVENT_RETENTION_MS, isRetained, retainedFrom } from '../../../lib/cases/event-retention.js';
import { filterBinding } from '../../../lib/cases/list-cases.js';
import { eventFilterBinding, eventIdToRead, parseEventListQuery } from '../../../lib/cases/list-events.js';
import { EVENT_RETENTION_SECONDS } from '../../../lib/adapters/dynamodb/table-keys.js';

describe('the event list query', () => {
  it('pages 25 events by default and reads every filter', () => {
    expect(parseEventListQuery(null, null)).toEqual({ filters: {}, limit: 25 });
    expect(
      parseEventListQuery(
        {
          type: 'case.updated',
          caseId: 'case_7Gk2mP9qR4sT8vW1xY3zA5',
          createdFrom: '2025-03-01T01:00:00+01:00',
          createdBefore: '2025-04-01T00:00:00Z',
          limit: '100',
          cursor: 'abc',
        },
        null,
      ),
    ).toEqual({
      filters: {
        type: 'case.updated',
        caseId: 'case_7Gk2mP9qR4sT8vW1xY3zA5',
        createdFrom: '2025-03-01T00:00:00.000Z',
        createdBefore: '2025-04-01T00:00:00.000Z',
      },
      limit: 100,
      cursor: 'abc',
    });
  });

  it('binds an event cursor to filters no case list cursor can carry, even with no filters at all', () => {
    expect(eventFilterBinding({})).not.toEqual(filterBinding({ filters: {} }));
    expect(eventFilterBinding({ type: 'case.created' })).not.toEqual(eventFilterBinding({ type: 'case.updated' }));
    expect(eventFilterBinding({ caseId: 'case_7Gk2mP9qR4sT8vW1xY3zA5' })).not.toEqual(eventFilterBinding({}));
  });

  it('reads only ids that can name an event', () => {
    expect(eventIdToRead('evt_3Jd8kQ2mX7pL4sW9zR1tB6')).toBe('evt_3Jd8kQ2mX7pL4sW9zR1tB6');
    for (const id of [undefined, '', 'evt_short', 'case_7Gk2mP9qR4sT8vW1xY3zA5', 'evt_3Jd8kQ2mX7pL4sW9zR1tB6x']) {
      expect(eventIdToRead(id)).toBeUndefined();
    }
  });
});

describe('event retention', () => {
  const createdAt = '2025-03-04T10:20:30.123Z';
  const at = (ms: number) => new Date(Date.parse(createdAt) + ms);

  it('shows an event for 30 days to the millisecond, and the list\u2019s lower bound agrees with the read', () => {
    expect(isRetained(createdAt, at(EVENT_RETENTION_MS - 1))).toBe(true);
    expect(isRetained(createdAt, at(EVENT_RETENTION_MS))).toBe(false);
    expect(retainedFrom(at(EVENT_RETENTION_MS - 1))).toBe(createdAt);
    expect(retainedFrom(at(EVENT_RETENTION_MS)) > createdAt).toBe(true);
  });

  it('gives the stored item a TTL from the same 30 days', () => {
    expect(EVENT_RETENTION_SECONDS * 1000).toBe(EVENT_RETENTION_MS);
    expect(EVENT_RETENTION_MS).toBe(30 * 24 * 3600 * 1000);
  });
});
