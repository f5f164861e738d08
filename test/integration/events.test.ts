import { GetItemCommand, TransactWriteItemsCommand } from '@aws-sdk/client-dynamodb';
import { eventItem } from '../../lib/adapters/dynamodb/event-items.js';
import { keys } from '../../lib/adapters/dynamodb/table-keys.js';
import { buildCaseEvent, type CaseEvent } from '../../lib/cases/case-lifecycle.js';
import { computeAmounts } from '../../lib/cases/compute-amounts.js';
import { newCaseId, type CaseView } from '../../lib/cases/case-record.js';
import { EVENT_RETENTION_MS } from '../../lib/cases/event-retention.js';
import { CursorSealer } from '../../lib/cases/list-cursor.js';
import type { Mode } from '../../lib/mode.js';
import { config } from '../../lib/runtime/config.js';
import { buildGetEventHandler, handler as getHandler } from '../../functions/get-event.js';
import { buildListEventsHandler, handler as listHandler } from '../../functions/list-events.js';
import { handler as listCasesHandler } from '../../functions/list-cases.js';
import { checkedInvoke } from '../support/contract.js';
import {
  apiEvent,
  bearer,
  ddb,
  extraKey,
  lambdaContext,
  newPartner,
  parse,
  stores,
  type ParsedResult,
  type Partner,
} from '../support/fixtures.js';

/**
 * GET /api/v1/events and GET /api/v1/events/{id} against DynamoDB Local. The events are written
 * as the outbox writes them: the one item shape (event-items.ts) in TransactWriteItems.
 */
type Query = Record<string, string | string[]>;
type Invocable = Parameters<typeof checkedInvoke>[0];

const DAY = 24 * 3600_000;

function caseView(caseId: string, createdAt: string, mode: Mode): CaseView {
  return {
    id: caseId,
    reference: 'PC-EVT-1',
    status: 'DRAFT',
    debtorName: 'Acme Widgets Ltd',
    principalAmount: '1250.00',
    currency: 'GBP',
    createdAt,
    updatedAt: createdAt,
    invoiceRef: `INV-${caseId.slice(-6)}`,
    invoiceDate: '2025-01-10',
    dueDate: '2025-02-10',
    recoveryGate: 'AWAITING_CONFIRMATION',
    livemode: mode === 'live',
    debtorVerification: { status: 'NOT_REQUESTED' },
    statusHistory: [{ status: 'DRAFT', at: createdAt }],
    claimStatutoryInterest: true,
    amounts: computeAmounts({
      principalPence: 125_000,
      dueDate: '2025-02-10',
      claimStatutoryInterest: true,
      payments: [],
      asOf: createdAt.slice(0, 10),
    }),
    closure: null,
  };
}

interface Written {
  event: CaseEvent;
  caseId: string;
}

/** A case's creation at `createdAt`, and `updates` changes after it, a second apart. */
function caseEvents(caseId: string, createdAt: Date, mode: Mode, updates: number): CaseEvent[] {
  const created = createdAt.toISOString();
  const view = caseView(caseId, created, mode);
  const events = [buildCaseEvent(view, created)];
  for (let i = 1; i <= updates; i++) {
    const at = new Date(createdAt.getTime() + i * 1000).toISOString();
    events.push(buildCaseEvent({ ...view, updatedAt: at, recoveryGate: 'CONFIRMED' }, at, { recoveryGate: 'AWAITING_CONFIRMATION' }));
  }
  return events;
}

/** Writes events as the outbox does (TransactWriteItems of the event items), 100 to a transaction. */
async function writeEvents(companyId: string, mode: Mode, events: CaseEvent[]): Promise<Written[]> {
  for (let i = 0; i < events.length; i += 100) {
    const chunk = events.slice(i, i + 100);
    await ddb().send(
      new TransactWriteItemsCommand({
        TransactItems: chunk.map((e) => ({
          Put: { TableName: config().tableName, Item: eventItem(e, companyId, mode), ConditionExpression: 'attribute_not_exists(pk)' },
        })),
      }),
    );
  }
  return events.map((event) => ({ event, caseId: event.data.object.id }));
}

function listEvent(headers: Record<string, string>, query: Query = {}) {
  return apiEvent({ method: 'GET', path: '/api/v1/events', resource: '/api/v1/events', headers, query });
}

async function list(apiKey: string, query: Query = {}, fn: Invocable = listHandler): Promise<ParsedResult> {
  return parse(await checkedInvoke(fn, listEvent(bearer(apiKey), query), lambdaContext()));
}

async function read(apiKey: string, id: string, fn: Invocable = getHandler): Promise<ParsedResult> {
  const event = apiEvent({
    method: 'GET',
    path: `/api/v1/events/${id}`,
    resource: '/api/v1/events/{id}',
    pathParameters: { id },
    headers: bearer(apiKey),
  });
  return parse(await checkedInvoke(fn, event, lambdaContext()));
}

interface Page {
  data: CaseEvent[];
  nextCursor: string | null;
}

/** Every page from the first, with the same filters; the ids in the order received. */
async function walk(apiKey: string, query: Query = {}, fn: Invocable = listHandler): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const res = await list(apiKey, cursor === null ? query : { ...query, cursor }, fn);
    expect([res.statusCode, res.body.code]).toEqual([200, undefined]);
    const page = res.body as unknown as Page;
    ids.push(...page.data.map((e) => e.id));
    cursor = page.nextCursor;
    pages++;
    if (pages > 1000) throw new Error('the walk does not end');
  } while (cursor !== null);
  return { ids, pages };
}

/** Newest first: createdAt descending, then id descending. */
const newestFirst = (written: Written[], keep: (w: Written) => boolean = () => true) =>
  written
    .filter(keep)
    .map((w) => w.event)
    .sort((a, b) => (`${a.createdAt}#${a.id}` < `${b.createdAt}#${b.id}` ? 1 : -1))
    .map((e) => e.id);

const sealer = () => new CursorSealer(Buffer.from(process.env.CURSOR_SECRET!, 'utf8'));
const listAt = (now: () => Date) => buildListEventsHandler({ ...stores(), cursors: async () => sealer(), now }) as unknown as Invocable;
const readAt = (now: () => Date) => buildGetEventHandler({ ...stores(), now }) as unknown as Invocable;

describe('listing and reading events', () => {
  let partner: Partner;
  let testKey: string;
  let other: Partner;
  let mine: Written[];
  let myTest: Written[];
  let theirs: Written[];
  const base = Date.now() - 3 * DAY;
  const at = (minutes: number) => new Date(base + minutes * 60_000);

  beforeAll(async () => {
    [partner, other] = await Promise.all([newPartner(['cases:read']), newPartner(['cases:read'])]);
    testKey = await extraKey(partner.companyId, ['cases:read'], 'test');
    // 40 cases, each created and changed twice (120 events); three cases created at the same
    // instant, so the ids break ties. The other company and the partner's test mode have their own.
    const cases = Array.from({ length: 40 }, (_, i) => ({ caseId: newCaseId(), createdAt: at(i < 3 ? 0 : i * 7) }));
    mine = await writeEvents(
      partner.companyId,
      'live',
      cases.flatMap((c) => caseEvents(c.caseId, c.createdAt, 'live', 2)),
    );
    myTest = await writeEvents(
      partner.companyId,
      'test',
      Array.from({ length: 5 }, (_, i) => caseEvents(newCaseId(), at(i * 5), 'test', 1)).flat(),
    );
    theirs = await writeEvents(
      other.companyId,
      'live',
      Array.from({ length: 10 }, (_, i) => caseEvents(newCaseId(), at(i * 3), 'live', 1)).flat(),
    );
  }, 60_000);

  it.each([[7], [25], [100]])(
    'returns every one of 120 events exactly once, newest first across the shards, walking pages of %i',
    async (limit) => {
      const { ids, pages } = await walk(partner.apiKey, { limit: String(limit) });
      expect(ids).toEqual(newestFirst(mine));
      expect(pages).toBe(Math.ceil(120 / limit));
    },
    60_000,
  );

  it('spreads a company\u2019s events over several index partitions', () => {
    const shards = new Set(mine.map((w) => keys.caseListShard(w.caseId)));
    expect(shards.size).toBeGreaterThan(4);
  });

  it('pages 25 events by default, and accepts a limit of 1 and of 100', async () => {
    const first = await list(partner.apiKey);
    expect((first.body as unknown as Page).data).toHaveLength(25);
    expect(typeof first.body.nextCursor).toBe('string');
    expect((await walk(partner.apiKey)).pages).toBe(5);
    expect(((await list(partner.apiKey, { limit: '1' })).body as unknown as Page).data).toHaveLength(1);
    expect(((await list(partner.apiKey, { limit: '100' })).body as unknown as Page).data).toHaveLength(100);
  });

  it('lists each event exactly as GET /api/v1/events/{id} returns it, and as it was written', async () => {
    const page = (await list(partner.apiKey, { limit: '5' })).body as unknown as Page;
    const written = new Map(mine.map((w) => [w.event.id, w.event]));
    for (const item of page.data) {
      const got = await read(partner.apiKey, item.id);
      expect([got.statusCode, got.body]).toEqual([200, item]);
      expect(item).toEqual(written.get(item.id));
    }
  });

  it('filters by type', async () => {
    const created = await walk(partner.apiKey, { type: 'case.created', limit: '9' });
    expect(created.ids).toEqual(newestFirst(mine, (w) => w.event.type === 'case.created'));
    expect(created.ids).toHaveLength(40);
    const updated = await walk(partner.apiKey, { type: 'case.updated', limit: '30' });
    expect(updated.ids).toEqual(newestFirst(mine, (w) => w.event.type === 'case.updated'));
  });

  it('filters by caseId: that case\u2019s events only, newest first, though other cases share its index partition', async () => {
    for (const caseId of [mine[0]!.caseId, mine[60]!.caseId]) {
      const sameShard = mine.filter((w) => w.caseId !== caseId && keys.caseListShard(w.caseId) === keys.caseListShard(caseId));
      expect(sameShard.length).toBeGreaterThan(0);
      const { ids } = await walk(partner.apiKey, { caseId, limit: '2' });
      expect(ids).toEqual(newestFirst(mine, (w) => w.caseId === caseId));
      expect(ids).toHaveLength(3);
    }
    const one = await walk(partner.apiKey, { caseId: mine[3]!.caseId, type: 'case.created' });
    expect(one.ids).toEqual([mine[3]!.event.id]);
  });

  it('includes createdFrom and excludes createdBefore, to the millisecond', async () => {
    const from = at(70).toISOString();
    const before = at(140).toISOString();
    const { ids } = await walk(partner.apiKey, { createdFrom: from, createdBefore: before, limit: '4' });
    expect(ids).toEqual(newestFirst(mine, (w) => w.event.createdAt >= from && w.event.createdAt < before));
    // Cases at minutes 70 to 133 (ten cases), each with its three events a second apart.
    expect(ids).toHaveLength(30);
    const exactly = await walk(partner.apiKey, { createdFrom: mine[0]!.event.createdAt, createdBefore: mine[1]!.event.createdAt });
    expect(exactly.ids).toEqual(newestFirst(mine, (w) => w.event.createdAt === mine[0]!.event.createdAt));
  });

  it('never lists another company\u2019s events, and theirs never show ours', async () => {
    const ours = new Set((await walk(partner.apiKey, { limit: '100' })).ids);
    const listed = (await walk(other.apiKey, { limit: '100' })).ids;
    expect(listed).toEqual(newestFirst(theirs));
    expect(listed.filter((id) => ours.has(id))).toEqual([]);
    expect((await list(partner.apiKey, { caseId: theirs[0]!.caseId })).body).toEqual({ data: [], nextCursor: null });
  });

  it('keeps test mode apart: a test key lists only test events, a live key never sees them', async () => {
    const test = (await walk(testKey, { limit: '100' })).ids;
    expect(test).toEqual(newestFirst(myTest));
    const live = new Set((await walk(partner.apiKey, { limit: '100' })).ids);
    expect(test.filter((id) => live.has(id))).toEqual([]);
    expect((await list(partner.apiKey, { caseId: myTest[0]!.caseId })).body).toEqual({ data: [], nextCursor: null });
  });

  it('answers 404 for another company\u2019s event, the other mode\u2019s, an unknown id and a malformed one', async () => {
    expect((await read(other.apiKey, theirs[0]!.event.id)).statusCode).toBe(200);
    const refusals = [
      await read(partner.apiKey, theirs[0]!.event.id),
      await read(partner.apiKey, myTest[0]!.event.id),
      await read(testKey, mine[0]!.event.id),
      await read(partner.apiKey, 'evt_0000000000000000000000'),
      await read(partner.apiKey, 'evt_short'),
      await read(partner.apiKey, mine[0]!.caseId),
    ];
    for (const res of refusals) expect([res.statusCode, res.body.code]).toEqual([404, 'NOT_FOUND']);
    // The same body whatever the reason (only the request id differs).
    const bodies = refusals.map((r) => ({ ...r.body, requestId: undefined }));
    for (const body of bodies) expect(body).toEqual(bodies[0]);
    expect((await read(testKey, myTest[0]!.event.id)).statusCode).toBe(200);
  });
});

describe('events past their 30 days', () => {
  let partner: Partner;
  let expired: Written[];
  let kept: Written[];

  beforeAll(async () => {
    partner = await newPartner(['cases:read']);
    const now = Date.now();
    // DynamoDB's TTL deletes an expired item days later, if at all locally: these stay in the table.
    expired = await writeEvents(partner.companyId, 'live', caseEvents(newCaseId(), new Date(now - EVENT_RETENTION_MS - 60_000), 'live', 1));
    kept = await writeEvents(partner.companyId, 'live', caseEvents(newCaseId(), new Date(now - EVENT_RETENTION_MS + 3_600_000), 'live', 1));
  });

  it('are neither listed nor read, though storage still holds them', async () => {
    for (const { event } of expired) {
      const item = await ddb().send(
        new GetItemCommand({ TableName: config().tableName, Key: { pk: { S: keys.event('live', event.id).pk }, sk: { S: 'EVENT' } } }),
      );
      expect(item.Item?.eventId?.S).toBe(event.id);
      const res = await read(partner.apiKey, event.id);
      expect([res.statusCode, res.body.code]).toEqual([404, 'NOT_FOUND']);
    }
    expect((await walk(partner.apiKey)).ids).toEqual(newestFirst(kept));
    expect((await walk(partner.apiKey, { caseId: expired[0]!.caseId })).ids).toEqual([]);
    expect((await walk(partner.apiKey, { createdBefore: new Date().toISOString(), createdFrom: '2000-01-01T00:00:00Z' })).ids).toEqual(
      newestFirst(kept),
    );
  });

  it('drop out of the list and the read once they pass 30 days', async () => {
    const { event } = kept[0]!;
    const justAfter = () => new Date(Date.parse(event.createdAt) + EVENT_RETENTION_MS);
    const justBefore = () => new Date(Date.parse(event.createdAt) + EVENT_RETENTION_MS - 1);
    expect((await read(partner.apiKey, event.id, readAt(justBefore))).statusCode).toBe(200);
    expect((await read(partner.apiKey, event.id, readAt(justAfter))).statusCode).toBe(404);
    expect((await walk(partner.apiKey, {}, listAt(justBefore))).ids).toContain(event.id);
    expect((await walk(partner.apiKey, {}, listAt(justAfter))).ids).not.toContain(event.id);
  });
});

describe('event list refusals', () => {
  let partner: Partner;
  beforeAll(async () => {
    partner = await newPartner(['cases:read']);
  });

  it.each([
    ['an unknown parameter', { status: 'DRAFT' }, 'status'],
    ['a repeated parameter', { type: ['case.created', 'case.created'] }, 'type'],
    ['limit 0', { limit: '0' }, 'limit'],
    ['limit 101', { limit: '101' }, 'limit'],
    ['a limit that is not a whole number', { limit: '2.5' }, 'limit'],
    ['an unknown type', { type: 'case.deleted' }, 'type'],
    ['a type in the wrong case', { type: 'CASE.CREATED' }, 'type'],
    ['a malformed caseId', { caseId: 'case_123' }, 'caseId'],
    ['an event id as caseId', { caseId: 'evt_3Jd8kQ2mX7pL4sW9zR1tB6' }, 'caseId'],
    ['a date without a time', { createdFrom: '2025-03-01' }, 'createdFrom'],
    ['an impossible date', { createdBefore: '2025-02-30T10:00:00Z' }, 'createdBefore'],
    [
      'createdBefore not after createdFrom',
      { createdFrom: '2025-03-01T10:00:00Z', createdBefore: '2025-03-01T10:00:00Z' },
      'createdBefore',
    ],
  ] as [string, Query, string][])('refuses %s with 400 INVALID_REQUEST naming the parameter', async (_name, query, field) => {
    const res = await list(partner.apiKey, query);
    expect([res.statusCode, res.body.code]).toEqual([400, 'INVALID_REQUEST']);
    expect((res.body.errors as { field: string }[]).map((e) => e.field)).toEqual([field]);
  });

  it('reports every bad parameter at once', async () => {
    const res = await list(partner.apiKey, { limit: '0', caseId: 'x', invoiceRef: 'INV-1' });
    expect((res.body.errors as { field: string }[]).map((e) => e.field).sort()).toEqual(['caseId', 'invoiceRef', 'limit']);
  });

  it('answers 401 without a valid key, before looking at the query', async () => {
    const res = parse(await checkedInvoke(listHandler, listEvent({}, { limit: '0' }), lambdaContext()));
    expect([res.statusCode, res.body.code]).toEqual([401, 'UNAUTHENTICATED']);
  });

  it('answers 403 INSUFFICIENT_SCOPE to a key without cases:read, on the list and on a read', async () => {
    const writeOnly = await extraKey(partner.companyId, ['cases:write']);
    const listed = await list(writeOnly, { type: 'case.created' });
    expect([listed.statusCode, listed.body.code, listed.body.requiredScope]).toEqual([403, 'INSUFFICIENT_SCOPE', 'cases:read']);
    const { event } = (await writeEvents(partner.companyId, 'live', caseEvents(newCaseId(), new Date(), 'live', 0)))[0]!;
    const got = await read(writeOnly, event.id);
    expect([got.statusCode, got.body.code, got.body.requiredScope]).toEqual([403, 'INSUFFICIENT_SCOPE', 'cases:read']);
    expect((await read(partner.apiKey, event.id)).statusCode).toBe(200);
  });
});

describe('event cursors', () => {
  let partner: Partner;
  let other: Partner;
  let testKey: string;
  let cursor: string;
  const issuedAt = new Date();

  beforeAll(async () => {
    [partner, other] = await Promise.all([newPartner(['cases:read']), newPartner(['cases:read'])]);
    testKey = await extraKey(partner.companyId, ['cases:read'], 'test');
    await writeEvents(
      partner.companyId,
      'live',
      Array.from({ length: 3 }, (_, i) => caseEvents(newCaseId(), new Date(issuedAt.getTime() - DAY + i * 60_000), 'live', 1)).flat(),
    );
    const first = await list(
      partner.apiKey,
      { limit: '2', type: 'case.updated' },
      listAt(() => issuedAt),
    );
    cursor = first.body.nextCursor as string;
    expect(cursor).toEqual(expect.any(String));
  });

  const refusal = (res: ParsedResult) => [res.statusCode, res.body.code];
  const later = (ms: number) => listAt(() => new Date(issuedAt.getTime() + ms));

  it('continues with the same filters, and with another limit, within 24 hours', async () => {
    const next = await list(partner.apiKey, { limit: '10', type: 'case.updated', cursor }, later(24 * 3600_000 - 1000));
    expect([(next.body as unknown as Page).data.length, next.body.nextCursor]).toEqual([1, null]);
  });

  it('refuses a cursor after 24 hours', async () => {
    const res = await list(partner.apiKey, { limit: '2', type: 'case.updated', cursor }, later(24 * 3600_000 + 1000));
    expect(refusal(res)).toEqual([400, 'INVALID_CURSOR']);
    expect(res.body.detail).toMatch(/expired/);
  });

  it('refuses a cursor with any character changed', async () => {
    for (const position of [0, 5, Math.floor(cursor.length / 2), cursor.length - 3]) {
      const flipped = cursor.slice(0, position) + (cursor[position] === 'A' ? 'B' : 'A') + cursor.slice(position + 1);
      expect(refusal(await list(partner.apiKey, { type: 'case.updated', cursor: flipped }, later(1000)))).toEqual([400, 'INVALID_CURSOR']);
    }
  });

  it('refuses another company\u2019s cursor, and the other mode\u2019s', async () => {
    const foreign = await list(other.apiKey, { type: 'case.updated', cursor }, later(1000));
    expect(refusal(foreign)).toEqual([400, 'INVALID_CURSOR']);
    expect(foreign.body.detail).toMatch(/another company/);
    expect(refusal(await list(testKey, { type: 'case.updated', cursor }, later(1000)))).toEqual([400, 'INVALID_CURSOR']);
  });

  it('refuses a cursor with other filters', async () => {
    for (const query of [
      {},
      { type: 'case.created' },
      { type: 'case.updated', caseId: newCaseId() },
      { type: 'case.updated', createdFrom: '2025-01-01T00:00:00Z' },
      { type: 'case.updated', createdBefore: '2099-01-01T00:00:00Z' },
    ] as Query[]) {
      const res = await list(partner.apiKey, { ...query, cursor }, later(1000));
      expect(refusal(res)).toEqual([400, 'INVALID_CURSOR']);
      expect(res.body.detail).toMatch(/other filters/);
    }
  });

  it('refuses a case list\u2019s cursor, and the case list refuses an event cursor', async () => {
    const unfiltered = (await list(partner.apiKey, { limit: '1' })).body.nextCursor as string;
    expect(unfiltered).toEqual(expect.any(String));
    const casesEvent = (query: Query) =>
      apiEvent({ method: 'GET', path: '/api/v1/cases', resource: '/api/v1/cases', headers: bearer(partner.apiKey), query });
    const asCaseCursor = parse(await checkedInvoke(listCasesHandler, casesEvent({ limit: '1', cursor: unfiltered }), lambdaContext()));
    expect(refusal(asCaseCursor)).toEqual([400, 'INVALID_CURSOR']);
    // A case list cursor, sealed as the case list seals one without filters.
    const caseCursor = sealer().seal(
      {
        companyId: partner.companyId,
        mode: 'live',
        filters: JSON.stringify([null, null, null, null, null]),
        position: { after: '9999', doneShards: [] },
      },
      new Date(),
    );
    expect(refusal(await list(partner.apiKey, { cursor: caseCursor }))).toEqual([400, 'INVALID_CURSOR']);
  });
});
