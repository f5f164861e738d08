import { randomBase62 } from '../../lib/random-id.js';
import { buildCaseEvent } from '../../lib/cases/case-lifecycle.js';
import { toCaseView, type RecoveryGate, type StoredCase } from '../../lib/cases/case-record.js';
import { invoiceRefKey } from '../../lib/cases/invoice-ref.js';
import { CursorSealer } from '../../lib/cases/list-cursor.js';
import { config } from '../../lib/runtime/config.js';
import { DynamoCaseLister } from '../../lib/adapters/dynamodb/case-lister.js';
import { DynamoCaseWriter } from '../../lib/adapters/dynamodb/case-writer.js';
import { faultyDocumentClient } from '../support/faulty-client.js';
import { handler, buildListCasesHandler } from '../../functions/list-cases.js';
import { checkedInvoke } from '../support/contract.js';
import { outcome, postCases, readCase, scanTable, uploadInvoice, validCase } from '../support/cases.js';
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

type Query = Record<string, string | string[]>;
type Invocable = Parameters<typeof checkedInvoke>[0];

function listEvent(headers: Record<string, string>, query: Query = {}) {
  return apiEvent({ method: 'GET', path: '/api/v1/cases', resource: '/api/v1/cases', headers, query });
}

async function list(apiKey: string, query: Query = {}, fn: Invocable = handler): Promise<ParsedResult> {
  return parse(await checkedInvoke(fn, listEvent(bearer(apiKey), query), lambdaContext()));
}

interface Page {
  data: { id: string; createdAt: string }[];
  nextCursor: string | null;
}

/** Every page from the first, with the same filters; the ids in the order received. */
async function walk(apiKey: string, query: Query = {}): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const res = await list(apiKey, cursor === null ? query : { ...query, cursor });
    expect(res.statusCode).toBe(200);
    const page = res.body as unknown as Page;
    ids.push(...page.data.map((c) => c.id));
    cursor = page.nextCursor;
    pages++;
    if (pages > 1000) throw new Error('the walk does not end');
  } while (cursor !== null);
  return { ids, pages };
}

/** The company's cases in list order (createdAt descending, then id descending), read from the table itself. */
async function expectedOrder(companyId: string, keep: (c: Record<string, unknown>) => boolean = () => true): Promise<string[]> {
  const cases = (await scanTable()).filter((i) => i.type === 'CASE' && i.companyId === companyId && keep(i));
  const key = (c: Record<string, unknown>) => `${c.createdAt as string}#${c.caseId as string}`;
  return cases.sort((a, b) => (key(a) < key(b) ? 1 : -1)).map((c) => c.caseId as string);
}

const writer = () => new DynamoCaseWriter(ddb(), config().tableName);

/** A case written through the production case writer at a chosen createdAt and gate. */
async function writeCase(
  companyId: string,
  createdAt: string,
  recoveryGate: RecoveryGate,
  invoiceRef = `INV-${randomBase62(10)}`,
): Promise<StoredCase> {
  const caseId = `case_${randomBase62(22)}`;
  const stored: StoredCase = {
    caseId,
    companyId,
    reference: `PC-${randomBase62(6)}`,
    status: 'DRAFT',
    recoveryGate,
    debtorName: 'Acme Widgets Ltd',
    debtorEmail: 'ap@acme.example',
    invoiceRef,
    invoiceRefKey: invoiceRefKey(invoiceRef),
    invoiceDate: '2025-01-01',
    dueDate: '2025-02-01',
    principalPence: 125000,
    currency: 'GBP',
    invoiceFileKey: `invoices/${companyId}/x.pdf`,
    createdAt,
    updatedAt: createdAt,
    createdByKeyId: 'k',
    requestId: 'r',
    mode: 'live',
  };
  const attestation = { b2b: true, under10k: true, within6years: true, undisputed: true, attestedBy: 'Jane Smith' };
  const result = await writer().write({
    stored,
    audit: { caseId, companyId, mode: 'live', ...attestation, attestedAt: createdAt, keyId: 'k', requestId: 'r', sourceIp: '203.0.113.7' },
    event: buildCaseEvent(toCaseView(stored), createdAt),
  });
  if (result.kind !== 'created') throw new Error(`could not write the case: ${JSON.stringify(result)}`);
  return stored;
}

const sealer = () => new CursorSealer(Buffer.from(process.env.CURSOR_SECRET!, 'utf8'));
const handlerAt = (now: () => Date) => buildListCasesHandler({ ...stores(), cursors: async () => sealer(), now }) as unknown as Invocable;

describe('listing cases', () => {
  let partner: Partner;
  let other: Partner;
  let fileKey: string;
  let otherFileKey: string;

  beforeAll(async () => {
    [partner, other] = await Promise.all([newPartner(), newPartner()]);
    [fileKey, otherFileKey] = await Promise.all([uploadInvoice(partner.apiKey), uploadInvoice(other.apiKey)]);
    // 250 cases in batches of 100, 100 and 50 (a batch shares one createdAt, so the id breaks the
    // ties), with another company's batches written in between.
    for (const [size, i] of [
      [100, 0],
      [100, 1],
      [50, 2],
    ] as const) {
      const mine = await postCases(partner.apiKey, {
        cases: Array.from({ length: size }, (_, n) => validCase(fileKey, { invoiceRef: `WALK-${i}-${n}` })),
      });
      expect(outcome(mine).created).toHaveLength(size);
      const theirs = await postCases(other.apiKey, {
        cases: Array.from({ length: 30 }, (_, n) => validCase(otherFileKey, { invoiceRef: `WALK-${i}-${n}` })),
      });
      expect(outcome(theirs).created).toHaveLength(30);
    }
  }, 120_000);

  it.each([[7], [25], [100]])(
    'returns every one of 250 cases exactly once, newest first, walking pages of %i',
    async (limit) => {
      const expected = await expectedOrder(partner.companyId);
      expect(expected).toHaveLength(250);
      const { ids, pages } = await walk(partner.apiKey, { limit: String(limit) });
      expect(ids).toEqual(expected);
      expect(pages).toBe(Math.ceil(250 / limit));
    },
    60_000,
  );

  it('pages 25 cases by default and says there is no next page on the last one', async () => {
    const first = await list(partner.apiKey);
    expect((first.body as unknown as Page).data).toHaveLength(25);
    expect(typeof first.body.nextCursor).toBe('string');
    const { pages } = await walk(partner.apiKey);
    expect(pages).toBe(10);
  }, 60_000);

  it('returns each item exactly as GET /api/v1/cases/{id} does', async () => {
    const page = (await list(partner.apiKey, { limit: '3' })).body as unknown as Page;
    for (const item of page.data) {
      const read = await readCase(partner.apiKey, item.id);
      expect(item).toEqual(read.body);
    }
  });

  it('carries each case\u2019s debtorVerification and statusHistory as GET does, in a page and in the invoiceRef look-up', async () => {
    const res = await postCases(partner.apiKey, { cases: [validCase(fileKey, { invoiceRef: 'INV-LIFE-1', debtorCompanyNo: '01000408' })] });
    const read = await readCase(partner.apiKey, outcome(res).created[0]!.id);
    expect(read.body).toMatchObject({
      status: 'DRAFT',
      debtorVerification: { status: 'PENDING' },
      statusHistory: [{ status: 'DRAFT', at: read.body.createdAt }],
    });
    expect((await list(partner.apiKey, { invoiceRef: 'inv-life-1' })).body.data).toEqual([read.body]);
    const page = (await list(partner.apiKey, { createdFrom: read.body.createdAt as string })).body as unknown as Page;
    expect(page.data).toEqual([read.body]);
  });

  it('never shows another company\u2019s cases, and theirs never show ours', async () => {
    const ours = new Set((await walk(partner.apiKey, { limit: '100' })).ids);
    const theirs = (await walk(other.apiKey, { limit: '100' })).ids;
    expect(theirs).toEqual(await expectedOrder(other.companyId));
    expect(theirs.filter((id) => ours.has(id))).toEqual([]);
  }, 60_000);

  it('finds a case by its invoiceRef immediately after the 201, as the duplicate check compares it', async () => {
    const res = await postCases(partner.apiKey, { cases: [validCase(fileKey, { invoiceRef: ' Inv-Straße-Ω 7 ' })] });
    expect(res.statusCode).toBe(201);
    const id = outcome(res).created[0]!.id;
    const read = await readCase(partner.apiKey, id);
    for (const spelling of [' Inv-Straße-Ω 7 ', 'INV-STRASSE-Ω 7', 'inv-strasse-ω 7']) {
      const found = await list(partner.apiKey, { invoiceRef: spelling });
      expect([found.statusCode, found.body]).toEqual([200, { data: [read.body], nextCursor: null }]);
    }
  });

  it('finds nothing for an unknown invoiceRef, or for another company\u2019s', async () => {
    expect((await list(partner.apiKey, { invoiceRef: 'NO-SUCH-INVOICE' })).body).toEqual({ data: [], nextCursor: null });
    await postCases(other.apiKey, { cases: [validCase(otherFileKey, { invoiceRef: 'THEIRS-ONLY-1' })] });
    expect((await list(partner.apiKey, { invoiceRef: 'THEIRS-ONLY-1' })).body).toEqual({ data: [], nextCursor: null });
    expect(((await list(other.apiKey, { invoiceRef: 'theirs-only-1' })).body as unknown as Page).data).toHaveLength(1);
  });

  it('applies the other filters to a look-up too', async () => {
    expect(
      ((await list(partner.apiKey, { invoiceRef: 'WALK-0-0', recoveryGate: 'AWAITING_CONFIRMATION' })).body as unknown as Page).data,
    ).toHaveLength(1);
    expect((await list(partner.apiKey, { invoiceRef: 'WALK-0-0', recoveryGate: 'AUTO_ATTESTED' })).body).toEqual({
      data: [],
      nextCursor: null,
    });
  });
});

describe('list filters and bounds', () => {
  let partner: Partner;
  const base = Date.parse('2025-03-01T00:00:00.000Z');
  const at = (minutes: number) => new Date(base + minutes * 60_000).toISOString();
  const gateOf = (i: number): RecoveryGate => (i % 3 === 0 ? 'AUTO_ATTESTED' : 'AWAITING_CONFIRMATION');
  let written: StoredCase[];

  beforeAll(async () => {
    partner = await newPartner(['cases:read']);
    // 60 cases a minute apart, every third one auto-attested, and two at the very same instant.
    written = await Promise.all(Array.from({ length: 60 }, (_, i) => writeCase(partner.companyId, at(i), gateOf(i))));
    written.push(await writeCase(partner.companyId, at(10), 'AWAITING_CONFIRMATION'));
  }, 60_000);

  const idsWhere = (keep: (c: StoredCase) => boolean) =>
    written
      .filter(keep)
      .sort((a, b) => (`${a.createdAt}#${a.caseId}` < `${b.createdAt}#${b.caseId}` ? 1 : -1))
      .map((c) => c.caseId);

  it('filters by recoveryGate, filling each page although most cases do not match', async () => {
    const { ids, pages } = await walk(partner.apiKey, { recoveryGate: 'AUTO_ATTESTED', limit: '4' });
    expect(ids).toEqual(idsWhere((c) => c.recoveryGate === 'AUTO_ATTESTED'));
    expect(pages).toBe(5); // 20 matches, 4 a page, every page full
  });

  it('filters by status', async () => {
    // The verification worker reads the table's stream and moves the auto-attested cases on to READY:
    // wait until it has settled them all, then every case is in exactly one status's list.
    const walks = async () => ({
      draft: (await walk(partner.apiKey, { status: 'DRAFT', limit: '50' })).ids,
      ready: (await walk(partner.apiKey, { status: 'READY', limit: '50' })).ids,
    });
    let seen = await walks();
    for (let i = 0; i < 60 && seen.draft.length + seen.ready.length !== idsWhere(() => true).length; i++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      seen = await walks();
    }
    expect([...seen.draft, ...seen.ready].sort()).toEqual(idsWhere(() => true).sort());
    expect(seen.draft).toEqual(idsWhere(() => true).filter((id) => seen.draft.includes(id)));
    expect(seen.ready).toEqual(idsWhere(() => true).filter((id) => seen.ready.includes(id)));
    expect(seen.draft.length).toBeGreaterThan(0);
  });

  it('shows cases stored before the lifecycle existed with its defaults: NOT_REQUESTED, and a history of DRAFT at creation', async () => {
    // writeCase stores the case as it was stored before the lifecycle: no debtorVerification, no statusHistory.
    const page = (await list(partner.apiKey, { createdFrom: at(59) })).body as unknown as Page & { data: Record<string, unknown>[] };
    expect(page.data).toEqual([
      expect.objectContaining({
        id: written[59]!.caseId,
        debtorVerification: { status: 'NOT_REQUESTED' },
        statusHistory: [{ status: 'DRAFT', at: at(59) }],
      }),
    ]);
  });

  it('includes createdFrom and excludes createdBefore, to the millisecond', async () => {
    const { ids } = await walk(partner.apiKey, { createdFrom: at(10), createdBefore: at(20), limit: '3' });
    expect(ids).toEqual(idsWhere((c) => c.createdAt >= at(10) && c.createdAt < at(20)));
    expect(ids).toHaveLength(11); // minutes 10 to 19, two cases at minute 10
  });

  it('reads a bound with an offset or a fraction finer than a millisecond as the instant it names', async () => {
    // 01:10+01:00 is 00:10Z; .0001 past minute 5 excludes the case at minute 5 from "from" and keeps it in "before".
    const shifted = await walk(partner.apiKey, { createdFrom: '2025-03-01T01:10:00+01:00', createdBefore: '2025-03-01T00:12:00Z' });
    expect(shifted.ids).toEqual(idsWhere((c) => c.createdAt >= at(10) && c.createdAt < at(12)));
    const fine = await walk(partner.apiKey, { createdFrom: '2025-03-01T00:05:00.0001Z', createdBefore: '2025-03-01T00:07:00.0001Z' });
    expect(fine.ids).toEqual(idsWhere((c) => c.createdAt > at(5) && c.createdAt <= at(7)));
  });

  it('combines a date range, a gate and pages', async () => {
    const { ids } = await walk(partner.apiKey, { createdFrom: at(15), recoveryGate: 'AWAITING_CONFIRMATION', limit: '6' });
    expect(ids).toEqual(idsWhere((c) => c.createdAt >= at(15) && c.recoveryGate === 'AWAITING_CONFIRMATION'));
  });

  it('answers an empty range with an empty last page', async () => {
    expect((await list(partner.apiKey, { createdBefore: at(-1) })).body).toEqual({ data: [], nextCursor: null });
  });
});

describe('list query refusals', () => {
  let partner: Partner;
  beforeAll(async () => {
    partner = await newPartner(['cases:read']);
  });

  it.each([
    ['an unknown parameter', { sort: 'asc' }, 'sort'],
    ['a repeated parameter', { status: ['DRAFT', 'DRAFT'] }, 'status'],
    ['limit 0', { limit: '0' }, 'limit'],
    ['limit 101', { limit: '101' }, 'limit'],
    ['a limit that is not a whole number', { limit: '2.5' }, 'limit'],
    ['an empty limit', { limit: '' }, 'limit'],
    ['an unknown status', { status: 'OPEN' }, 'status'],
    ['a status in the wrong case', { status: 'draft' }, 'status'],
    ['an unknown recoveryGate', { recoveryGate: 'NONE' }, 'recoveryGate'],
    ['a date without a time', { createdFrom: '2025-03-01' }, 'createdFrom'],
    ['a date-time without Z or an offset', { createdFrom: '2025-03-01T10:00:00' }, 'createdFrom'],
    ['an impossible date', { createdBefore: '2025-02-30T10:00:00Z' }, 'createdBefore'],
    [
      'createdBefore not after createdFrom',
      { createdFrom: '2025-03-01T10:00:00Z', createdBefore: '2025-03-01T10:00:00Z' },
      'createdBefore',
    ],
    ['a blank invoiceRef', { invoiceRef: '   ' }, 'invoiceRef'],
    ['an invoiceRef of 101 characters', { invoiceRef: 'x'.repeat(101) }, 'invoiceRef'],
  ] as [string, Query, string][])('refuses %s with 400 INVALID_REQUEST naming the parameter', async (_name, query, field) => {
    const res = await list(partner.apiKey, query);
    expect([res.statusCode, res.body.code]).toEqual([400, 'INVALID_REQUEST']);
    expect((res.body.errors as { field: string }[]).map((e) => e.field)).toEqual([field]);
  });

  it('reports every bad parameter at once', async () => {
    const res = await list(partner.apiKey, { limit: '0', status: 'OPEN', colour: 'red' });
    expect((res.body.errors as { field: string }[]).map((e) => e.field).sort()).toEqual(['colour', 'limit', 'status']);
  });

  it('answers 401 without a valid key, before looking at the query', async () => {
    const res = parse(await checkedInvoke(handler, listEvent({}, { limit: '0' }), lambdaContext()));
    expect([res.statusCode, res.body.code]).toEqual([401, 'UNAUTHENTICATED']);
    const wrong = parse(await checkedInvoke(handler, listEvent(bearer(`${partner.apiKey.slice(0, -2)}xx`)), lambdaContext()));
    expect(wrong.statusCode).toBe(401);
  });

  it('answers 403 to a key without cases:read', async () => {
    const writeOnly = await extraKey(partner.companyId, ['cases:write']);
    const res = await list(writeOnly, { invoiceRef: 'X' });
    expect([res.statusCode, res.body.code, res.body.requiredScope]).toEqual([403, 'INSUFFICIENT_SCOPE', 'cases:read']);
  });
});

describe('list cursors', () => {
  let partner: Partner;
  let other: Partner;
  let cursor: string;
  const issuedAt = new Date('2025-06-01T12:00:00.000Z');

  beforeAll(async () => {
    [partner, other] = await Promise.all([newPartner(['cases:read']), newPartner(['cases:read'])]);
    await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        writeCase(partner.companyId, new Date(Date.parse('2025-05-01T00:00:00Z') + i * 1000).toISOString(), 'AWAITING_CONFIRMATION'),
      ),
    );
    const first = await list(
      partner.apiKey,
      { limit: '2', status: 'DRAFT' },
      handlerAt(() => issuedAt),
    );
    cursor = first.body.nextCursor as string;
    expect(cursor).toEqual(expect.any(String));
  });

  const refusal = (res: ParsedResult) => [res.statusCode, res.body.code];
  const later = (ms: number) => handlerAt(() => new Date(issuedAt.getTime() + ms));

  it('continues with the same filters, and with another limit, within 24 hours', async () => {
    const next = await list(partner.apiKey, { limit: '2', status: 'DRAFT', cursor }, later(24 * 3600_000 - 1000));
    expect((next.body as unknown as Page).data).toHaveLength(2);
    const rest = await list(partner.apiKey, { limit: '10', status: 'DRAFT', cursor }, later(1000));
    expect((rest.body as unknown as Page).data).toHaveLength(3);
    expect(rest.body.nextCursor).toBeNull();
  });

  it('refuses a cursor after 24 hours', async () => {
    const res = await list(partner.apiKey, { limit: '2', status: 'DRAFT', cursor }, later(24 * 3600_000 + 1000));
    expect(refusal(res)).toEqual([400, 'INVALID_CURSOR']);
    expect(res.body.detail).toMatch(/expired/);
  });

  it('refuses a cursor with any character changed', async () => {
    for (const position of [0, 5, Math.floor(cursor.length / 2), cursor.length - 3]) {
      const flipped = cursor.slice(0, position) + (cursor[position] === 'A' ? 'B' : 'A') + cursor.slice(position + 1);
      expect(refusal(await list(partner.apiKey, { limit: '2', status: 'DRAFT', cursor: flipped }, later(1000)))).toEqual([
        400,
        'INVALID_CURSOR',
      ]);
    }
    for (const garbage of ['', 'x', cursor.slice(0, 20), `${cursor}AAAA`, 'not a cursor!', 'A'.repeat(5000)]) {
      expect(refusal(await list(partner.apiKey, { status: 'DRAFT', cursor: garbage }, later(1000)))).toEqual([400, 'INVALID_CURSOR']);
    }
  });

  it('refuses another company\u2019s cursor', async () => {
    const res = await list(other.apiKey, { limit: '2', status: 'DRAFT', cursor }, later(1000));
    expect(refusal(res)).toEqual([400, 'INVALID_CURSOR']);
    expect(res.body.detail).toMatch(/another company/);
  });

  it('refuses a cursor with other filters, or beside an invoiceRef', async () => {
    for (const query of [
      {},
      { status: 'DRAFT', recoveryGate: 'AUTO_ATTESTED' },
      { status: 'DRAFT', createdFrom: '2025-01-01T00:00:00Z' },
      { status: 'DRAFT', invoiceRef: 'X' },
    ] as Query[]) {
      const res = await list(partner.apiKey, { ...query, cursor }, later(1000));
      expect(refusal(res)).toEqual([400, 'INVALID_CURSOR']);
      expect(res.body.detail).toMatch(/other filters/);
    }
  });

  it('refuses a cursor sealed with another key', async () => {
    const foreignSealer = new CursorSealer(Buffer.alloc(32, 7));
    const forged = foreignSealer.seal(
      {
        companyId: partner.companyId,
        mode: 'live',
        filters: JSON.stringify([null, 'DRAFT', null, null, null]),
        position: { after: '9999', doneShards: [] },
      },
      issuedAt,
    );
    expect(refusal(await list(partner.apiKey, { status: 'DRAFT', cursor: forged }, later(1000)))).toEqual([400, 'INVALID_CURSOR']);
  });
});

describe('a local table from before the list', () => {
  it('gains the case-list index when the local stack starts on it', async () => {
    const { CreateTableCommand, DeleteTableCommand, DescribeTableCommand, DynamoDBClient } = await import('@aws-sdk/client-dynamodb');
    const { ensureTable } = await import('../../infra/local/stores.js');
    const endpoint = process.env.DYNAMODB_ENDPOINT!;
    const client = new DynamoDBClient({
      endpoint,
      region: config().region,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    const tableName = `old-table-${randomBase62(8)}`;
    try {
      await client.send(
        new CreateTableCommand({
          TableName: tableName,
          BillingMode: 'PAY_PER_REQUEST',
          AttributeDefinitions: ['pk', 'sk', 'gsi1pk', 'gsi1sk'].map((AttributeName) => ({ AttributeName, AttributeType: 'S' as const })),
          KeySchema: [
            { AttributeName: 'pk', KeyType: 'HASH' },
            { AttributeName: 'sk', KeyType: 'RANGE' },
          ],
          GlobalSecondaryIndexes: [
            {
              IndexName: 'gsi1',
              KeySchema: [
                { AttributeName: 'gsi1pk', KeyType: 'HASH' },
                { AttributeName: 'gsi1sk', KeyType: 'RANGE' },
              ],
              Projection: { ProjectionType: 'ALL' },
            },
          ],
        }),
      );
      await ensureTable(endpoint, tableName);
      const indexes = (await client.send(new DescribeTableCommand({ TableName: tableName }))).Table?.GlobalSecondaryIndexes ?? [];
      expect(indexes.map((i) => [i.IndexName, i.IndexStatus]).sort()).toEqual([
        ['gsi1', 'ACTIVE'],
        ['gsi2', 'ACTIVE'],
      ]);
    } finally {
      await client.send(new DeleteTableCommand({ TableName: tableName })).catch(() => undefined);
      client.destroy();
    }
  });
});

describe('the look-up under eventual consistency', () => {
  it('finds a case written a moment ago, where the index does not show it yet', async () => {
    // Reads without ConsistentRead (and every index query) miss this client's writes of the last minute.
    const { client, counter } = faultyDocumentClient({ decide: () => undefined }, { staleReadWindowMs: 60_000 });
    const companyId = `cmp_${randomBase62(16)}`;
    const at = new Date().toISOString();
    const caseId = `case_${randomBase62(22)}`;
    const stored: StoredCase = {
      caseId,
      companyId,
      reference: 'PC-STALE-1',
      status: 'DRAFT',
      recoveryGate: 'AWAITING_CONFIRMATION',
      debtorName: 'Acme',
      debtorEmail: 'ap@acme.example',
      invoiceRef: 'INV-STALE-1',
      invoiceRefKey: invoiceRefKey('INV-STALE-1'),
      invoiceDate: '2025-01-01',
      dueDate: '2025-02-01',
      principalPence: 100,
      currency: 'GBP',
      invoiceFileKey: `invoices/${companyId}/x.pdf`,
      createdAt: at,
      updatedAt: at,
      createdByKeyId: 'k',
      requestId: 'r',
      mode: 'live',
    };
    const attestation = { b2b: true, under10k: true, within6years: true, undisputed: true, attestedBy: 'J' };
    const written = await new DynamoCaseWriter(client, config().tableName).write({
      stored,
      audit: { caseId, companyId, mode: 'live', ...attestation, attestedAt: at, keyId: 'k', requestId: 'r', sourceIp: '203.0.113.7' },
      event: buildCaseEvent(toCaseView(stored), at),
    });
    expect(written.kind).toBe('created');
    const lister = new DynamoCaseLister(client, config().tableName);
    expect((await lister.findByInvoiceRef('live', companyId, invoiceRefKey(' inv-stale-1 '))).map((c) => c.caseId)).toEqual([caseId]);
    expect((await lister.page({ mode: 'live', companyId, filters: {}, limit: 10 })).cases).toEqual([]);
    expect(counter.staleReads).toBeGreaterThan(0);
  });
});
