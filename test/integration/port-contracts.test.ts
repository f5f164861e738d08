import type { CompanyStore } from '../../lib/accounts/ports.js';
import type { ApiKeyRecord, ApiKeyStore } from '../../lib/auth/ports.js';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { buildCaseEvent, type CaseEvent } from '../../lib/cases/case-lifecycle.js';
import { toCaseView, type StoredCase } from '../../lib/cases/case-record.js';
import type { CaseReader, CaseWriter, IdempotencyStore, NewCase, ReferenceAllocator, StoredBatchResponse } from '../../lib/cases/ports.js';
import { DynamoCaseWriter } from '../../lib/adapters/dynamodb/case-writer.js';
import { eventFromItem } from '../../lib/adapters/dynamodb/event-items.js';
import { GSI2, keys as tableKeys } from '../../lib/adapters/dynamodb/table-keys.js';
import { documentClient } from '../../lib/adapters/dynamodb/dynamo-client.js';
import { DynamoIdempotencyStore } from '../../lib/adapters/dynamodb/idempotency-store.js';
import { DynamoReferenceAllocator } from '../../lib/adapters/dynamodb/reference-allocator.js';
import { tableStores } from '../../lib/adapters/dynamodb/stores.js';
import type { Mode } from '../../lib/mode.js';
import { randomBase62 } from '../../lib/random-id.js';
import { standaloneDeadline } from '../../lib/deadline.js';
import { config } from '../../lib/runtime/config.js';
import {
  MemoryApiKeyStore,
  MemoryCaseWriter,
  MemoryCompanyStore,
  MemoryIdempotencyStore,
  MemoryReferenceAllocator,
} from '../support/memory-stores.js';

/**
 * The port contract: one suite, run against the in-memory fakes of the fast tier and against the
 * DynamoDB adapters on DynamoDB Local. A fake that drifts from DynamoDB's behaviour (a condition it
 * forgets, an ALL_OLD answer it shapes differently, a read that sees what it should not) fails here,
 * so a use-case test that passes over the fakes means the same over the real store.
 */
interface Ports {
  keys: ApiKeyStore;
  companies: CompanyStore;
  writer: CaseWriter;
  reader: CaseReader;
  idempotency: IdempotencyStore;
  references: ReferenceAllocator;
  /** The events stored for a case (no port reads them yet: the suite looks at what each store holds). */
  eventsOf(mode: Mode, companyId: string, caseId: string): Promise<CaseEvent[]>;
}

function memoryPorts(): Ports {
  const writer = new MemoryCaseWriter();
  return {
    keys: new MemoryApiKeyStore(),
    companies: new MemoryCompanyStore(),
    writer,
    reader: writer,
    idempotency: new MemoryIdempotencyStore(),
    references: new MemoryReferenceAllocator(),
    // Case ids are unique across companies: the case id and the mode name a case's events.
    eventsOf: async (mode, _company, caseId) =>
      writer.events.filter((e) => e.data.object.id === caseId && e.livemode === (mode === 'live')),
  };
}

function dynamoPorts(): Ports {
  const cfg = config();
  const client = documentClient(cfg);
  const stores = tableStores(client, cfg.tableName);
  return {
    keys: stores.keys,
    companies: stores.companies,
    writer: new DynamoCaseWriter(client, cfg.tableName),
    reader: stores.caseReader,
    idempotency: new DynamoIdempotencyStore(client, cfg.tableName),
    references: new DynamoReferenceAllocator(client, cfg.tableName),
    // The event list's access pattern (table-keys.ts): the case's one shard of its company's events.
    eventsOf: async (mode, company, caseId) => {
      const out = await client.send(
        new QueryCommand({
          TableName: cfg.tableName,
          IndexName: GSI2,
          KeyConditionExpression: 'gsi2pk = :pk',
          FilterExpression: 'caseId = :caseId',
          ExpressionAttributeValues: {
            ':pk': tableKeys.eventListPartition(mode, company, tableKeys.caseListShard(caseId)),
            ':caseId': caseId,
          },
        }),
      );
      return (out.Items ?? []).map((item) => eventFromItem(item).event);
    },
  };
}

const companyId = () => `cmp_${randomBase62(16)}`;
/** A batch of one: the port writes batches. */
const writeOne = async (writer: CaseWriter, c: NewCase, deadline?: ReturnType<typeof standaloneDeadline>) =>
  (await writer.writeAll([c], deadline))[0];
const NOW = new Date('2026-03-01T12:00:00.000Z');
const DEADLINE = () => standaloneDeadline(10_000);
const EXPIRED = () => standaloneDeadline(0);

function keyRecord(overrides: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
  return {
    keyId: randomBase62(16),
    companyId: companyId(),
    scopes: ['cases:read', 'cases:write'],
    mode: 'live',
    secretHash: 'ab'.repeat(32),
    revoked: false,
    createdAt: NOW.toISOString(),
    ...overrides,
  };
}

function newCase(company: string, invoiceRef: string, caseId = `case_${randomBase62(22)}`, mode: Mode = 'live'): NewCase {
  const at = NOW.toISOString();
  const stored: StoredCase = {
    caseId,
    companyId: company,
    reference: `PC-${randomBase62(3).toUpperCase()}-222`,
    status: 'DRAFT',
    recoveryGate: 'AWAITING_CONFIRMATION',
    debtorName: 'Acme Widgets Ltd',
    debtorEmail: 'ap@acme.example',
    invoiceRef,
    invoiceRefKey: invoiceRef.trim().normalize('NFC').toLowerCase(),
    invoiceDate: '2025-01-10',
    dueDate: '2025-02-10',
    principalPence: 125_050,
    currency: 'GBP',
    invoiceFileKey: `invoices/${company}/${randomBase62(32)}.pdf`,
    description: 'contract test',
    createdAt: at,
    updatedAt: at,
    createdByKeyId: 'KeyAAAAAAAAAAAAA',
    requestId: 'req-contract',
    mode,
    debtorVerification: { status: 'NOT_REQUESTED' },
    statusHistory: [{ status: 'DRAFT', at }],
  };
  const audit = {
    caseId,
    companyId: company,
    mode,
    b2b: true,
    under10k: true,
    within6years: true,
    undisputed: true,
    attestedBy: 'J. Smith',
    attestedAt: at,
    keyId: 'KeyAAAAAAAAAAAAA',
    requestId: 'req-contract',
    sourceIp: '192.0.2.1',
  };
  return { stored, audit, event: buildCaseEvent(toCaseView(stored), at) };
}

const claim = (
  company: string,
  key: string,
  requestId: string,
  now = NOW,
  staleAfterSeconds = 960,
  ttlSeconds = 86_400,
  mode: Mode = 'live',
) => ({
  mode,
  companyId: company,
  idempotencyKey: key,
  requestId,
  now,
  ttlSeconds,
  staleAfterSeconds,
  requestHash: `hash-of-${requestId}`,
});
const NOW_S = Math.floor(NOW.getTime() / 1000);
const inProgress = (requestId: string, claimedAt = NOW_S) => ({
  claimed: false,
  state: 'IN_PROGRESS',
  claimedAt,
  requestHash: `hash-of-${requestId}`,
});
const response = (n = 1): StoredBatchResponse => ({
  created: Array.from({ length: n }, (_, i) => ({
    index: i,
    invoiceRef: `R-${i}`,
    id: `case_${String(i).padStart(22, '0')}`,
    reference: 'PC-222-222',
    livemode: true,
  })),
  rejected: [],
});

describe.each([
  ['in-memory fakes', memoryPorts],
  ['DynamoDB adapters on DynamoDB Local', dynamoPorts],
] as const)('port contract: %s', (_name, make) => {
  let ports: Ports;
  beforeAll(() => {
    ports = make();
  });

  describe('API keys', () => {
    it('finds a created key by id, and nothing for an unknown id', async () => {
      const record = keyRecord();
      await ports.keys.create(record);
      expect(await ports.keys.get(record.keyId)).toEqual(record);
      expect(await ports.keys.get(randomBase62(16))).toBeUndefined();
    });

    it('refuses to create a second key with the same id', async () => {
      const record = keyRecord();
      await ports.keys.create(record);
      await expect(ports.keys.create({ ...record, companyId: companyId() })).rejects.toThrow();
      expect((await ports.keys.get(record.keyId))?.companyId).toBe(record.companyId);
    });

    it('lists only the company’s own keys', async () => {
      const company = companyId();
      const mine = [keyRecord({ companyId: company }), keyRecord({ companyId: company })];
      for (const r of [...mine, keyRecord()]) await ports.keys.create(r);
      expect((await ports.keys.listForCompany(company)).map((r) => r.keyId).sort()).toEqual(mine.map((r) => r.keyId).sort());
    });

    it('revokes once, keeping the first revocation time, and reports an unknown key', async () => {
      const record = keyRecord();
      await ports.keys.create(record);
      expect(await ports.keys.revoke(record.keyId, '2026-03-02T00:00:00.000Z')).toBe(true);
      expect(await ports.keys.revoke(record.keyId, '2026-03-03T00:00:00.000Z')).toBe(true);
      expect(await ports.keys.get(record.keyId)).toMatchObject({ revoked: true, revokedAt: '2026-03-02T00:00:00.000Z' });
      expect(await ports.keys.revoke(randomBase62(16), '2026-03-02T00:00:00.000Z')).toBe(false);
      expect(await ports.keys.get(randomBase62(16))).toBeUndefined();
    });

    it('records key use at most once per interval and never creates a key by touching it', async () => {
      const record = keyRecord();
      await ports.keys.create(record);
      await ports.keys.touch(record.keyId, '2026-03-01T12:00:00.000Z', '2026-03-01T11:59:00.000Z');
      await ports.keys.touch(record.keyId, '2026-03-01T12:00:30.000Z', '2026-03-01T11:59:30.000Z');
      expect((await ports.keys.get(record.keyId))?.lastUsedAt).toBe('2026-03-01T12:00:00.000Z');
      await ports.keys.touch(record.keyId, '2026-03-01T12:01:01.000Z', '2026-03-01T12:00:01.000Z');
      expect((await ports.keys.get(record.keyId))?.lastUsedAt).toBe('2026-03-01T12:01:01.000Z');
      const ghost = randomBase62(16);
      await ports.keys.touch(ghost, '2026-03-01T12:00:00.000Z', '2026-03-01T11:59:00.000Z');
      expect(await ports.keys.get(ghost)).toBeUndefined();
    });
  });

  describe('companies', () => {
    it('creates once, reads back, lists, and switches auto-attestation only for a company that exists', async () => {
      const record = {
        companyId: companyId(),
        name: 'Contract Co',
        autoAttestation: false,
        createdAt: NOW.toISOString(),
        updatedAt: NOW.toISOString(),
      };
      await ports.companies.create(record);
      await expect(ports.companies.create(record)).rejects.toThrow();
      expect(await ports.companies.get(record.companyId)).toEqual(record);
      expect((await ports.companies.list()).map((c) => c.companyId)).toContain(record.companyId);
      expect(await ports.companies.setAutoAttestation(record.companyId, true, '2026-03-02T00:00:00.000Z')).toBe(true);
      expect(await ports.companies.get(record.companyId)).toMatchObject({ autoAttestation: true, updatedAt: '2026-03-02T00:00:00.000Z' });
      const ghost = companyId();
      expect(await ports.companies.setAutoAttestation(ghost, true, NOW.toISOString())).toBe(false);
      expect(await ports.companies.get(ghost)).toBeUndefined();
    });
  });

  describe('case writes and reads', () => {
    it('writes a case that the very next read returns exactly as stored', async () => {
      const c = newCase(companyId(), 'INV-1');
      expect(await writeOne(ports.writer, c, DEADLINE())).toMatchObject({ kind: 'created' });
      expect(await ports.reader.get('live', c.stored.caseId)).toEqual(c.stored);
      expect(await ports.reader.get('live', `case_${randomBase62(22)}`)).toBeUndefined();
    });

    it('announces a created case with exactly one case.created event carrying the case as the next read returns it', async () => {
      const company = companyId();
      const c = newCase(company, 'EVT-1');
      expect(await writeOne(ports.writer, c, DEADLINE())).toMatchObject({ kind: 'created' });
      // A retry of our own write is no second creation: no second event.
      expect(await writeOne(ports.writer, c, DEADLINE())).toMatchObject({ kind: 'created' });
      const events = await ports.eventsOf('live', company, c.stored.caseId);
      expect(events).toEqual([c.event]);
      expect(events[0]).toMatchObject({ type: 'case.created', livemode: true, createdAt: c.stored.createdAt });
      expect(events[0]!.data.object).toEqual(toCaseView((await ports.reader.get('live', c.stored.caseId))!));
    });

    it('counts a repeated write of the same case as created (a retry of our own write)', async () => {
      const c = newCase(companyId(), 'INV-2');
      await writeOne(ports.writer, c, DEADLINE());
      expect(await writeOne(ports.writer, c, DEADLINE())).toMatchObject({ kind: 'created' });
    });

    it('refuses a second case for the same invoiceRef of the same company, naming the first, and writes nothing of it', async () => {
      const company = companyId();
      const first = newCase(company, 'INV-3');
      const second = newCase(company, 'INV-3');
      await writeOne(ports.writer, first, DEADLINE());
      expect(await writeOne(ports.writer, second, DEADLINE())).toMatchObject({
        kind: 'duplicate',
        existingCaseId: first.stored.caseId,
        existingReference: first.stored.reference,
      });
      expect(await ports.reader.get('live', second.stored.caseId)).toBeUndefined();
      expect(await ports.eventsOf('live', company, second.stored.caseId)).toEqual([]);
      expect(await ports.eventsOf('live', company, first.stored.caseId)).toEqual([first.event]);
    });

    it('keeps modes apart: the same invoiceRef creates a case in each mode, and a read in the other mode finds nothing', async () => {
      const company = companyId();
      const live = newCase(company, 'INV-MODE');
      const test = newCase(company, 'INV-MODE', undefined, 'test');
      expect(await writeOne(ports.writer, live, DEADLINE())).toMatchObject({ kind: 'created' });
      expect(await writeOne(ports.writer, test, DEADLINE())).toMatchObject({ kind: 'created' });
      expect(await writeOne(ports.writer, newCase(company, 'INV-MODE', undefined, 'test'), DEADLINE())).toMatchObject({
        kind: 'duplicate',
        existingCaseId: test.stored.caseId,
      });
      expect(await ports.reader.get('test', test.stored.caseId)).toEqual(test.stored);
      expect(await ports.reader.get('live', test.stored.caseId)).toBeUndefined();
      expect(await ports.reader.get('test', live.stored.caseId)).toBeUndefined();
      expect(await ports.eventsOf('test', company, test.stored.caseId)).toEqual([test.event]);
      expect(await ports.eventsOf('live', company, test.stored.caseId)).toEqual([]);
      expect(await ports.eventsOf('live', company, live.stored.caseId)).toEqual([live.event]);
    });

    it('keeps companies apart: the same invoiceRef creates a case for each company', async () => {
      const a = newCase(companyId(), 'INV-4');
      const b = newCase(companyId(), 'INV-4');
      expect(await writeOne(ports.writer, a, DEADLINE())).toMatchObject({ kind: 'created' });
      expect(await writeOne(ports.writer, b, DEADLINE())).toMatchObject({ kind: 'created' });
    });
    it('writes a batch larger than one transaction, answering each case in order: created, or duplicate naming the existing case', async () => {
      const company = companyId();
      const earlier = [newCase(company, 'B-7'), newCase(company, 'B-40'), newCase(company, 'B-99')];
      expect(await ports.writer.writeAll(earlier, DEADLINE())).toEqual(earlier.map(() => expect.objectContaining({ kind: 'created' })));
      const batch = Array.from({ length: 100 }, (_, i) => newCase(company, `B-${i}`));
      const outcomes = await ports.writer.writeAll(batch, DEADLINE());
      expect(outcomes).toHaveLength(100);
      const byRef = new Map(earlier.map((c) => [c.stored.invoiceRef, c]));
      for (const [i, outcome] of outcomes.entries()) {
        const first = byRef.get(batch[i]!.stored.invoiceRef);
        if (first) {
          expect(outcome).toMatchObject({
            kind: 'duplicate',
            existingCaseId: first.stored.caseId,
            existingReference: first.stored.reference,
          });
          expect(await ports.reader.get('live', batch[i]!.stored.caseId)).toBeUndefined();
          expect(await ports.eventsOf('live', company, batch[i]!.stored.caseId)).toEqual([]);
        } else {
          expect(outcome).toMatchObject({ kind: 'created' });
          expect(await ports.reader.get('live', batch[i]!.stored.caseId)).toEqual(batch[i]!.stored);
          expect(await ports.eventsOf('live', company, batch[i]!.stored.caseId)).toEqual([batch[i]!.event]);
        }
      }
    }, 30_000); // more than 100 cases on DynamoDB Local: it timed out at jest's 5 s default on a busy machine

    it('counts a repeated batch of its own cases as created, and an empty batch as nothing', async () => {
      const company = companyId();
      const batch = Array.from({ length: 40 }, (_, i) => newCase(company, `R-${i}`));
      await ports.writer.writeAll(batch, DEADLINE());
      expect(await ports.writer.writeAll(batch, DEADLINE())).toEqual(batch.map(() => expect.objectContaining({ kind: 'created' })));
      expect(await ports.writer.writeAll([], DEADLINE())).toEqual([]);
    });
  });

  describe('idempotency claims', () => {
    it('claims a new key once; a second claim sees it in progress', async () => {
      const company = companyId();
      expect(await ports.idempotency.claim(claim(company, 'k1', 'r1'))).toEqual({ claimed: true });
      expect(await ports.idempotency.claim(claim(company, 'k1', 'r2'))).toEqual(inProgress('r1'));
      expect(await ports.idempotency.claim(claim(companyId(), 'k1', 'r3'))).toEqual({ claimed: true });
    });

    it('keeps modes apart: the same key claimed in live and in test is two claims', async () => {
      const company = companyId();
      expect(await ports.idempotency.claim(claim(company, 'both', 'r1'))).toEqual({ claimed: true });
      expect(await ports.idempotency.claim(claim(company, 'both', 'r2', NOW, 960, 86_400, 'test'))).toEqual({ claimed: true });
      await ports.idempotency.complete('test', company, 'both', 'r2', response(), NOW);
      expect(await ports.idempotency.claim(claim(company, 'both', 'r3'))).toEqual(inProgress('r1'));
      await ports.idempotency.release('live', company, 'both', 'r2');
      expect(await ports.idempotency.claim(claim(company, 'both', 'r4', NOW, 960, 86_400, 'test'))).toMatchObject({
        claimed: false,
        state: 'COMPLETED',
      });
    });

    it('replays a completed answer, small or large (past the plain-item size)', async () => {
      const company = companyId();
      for (const [key, size] of [
        ['small', 1],
        ['large', 900],
      ] as const) {
        await ports.idempotency.claim(claim(company, key, 'r1'));
        await ports.idempotency.complete('live', company, key, 'r1', response(size), NOW);
        expect(await ports.idempotency.claim(claim(company, key, 'r2'))).toEqual({
          claimed: false,
          state: 'COMPLETED',
          response: response(size),
          requestHash: 'hash-of-r1',
        });
      }
    });

    it('recognises its own claim when the put is repeated (an earlier answer was lost)', async () => {
      const company = companyId();
      expect(await ports.idempotency.claim(claim(company, 'own', 'r1'))).toEqual({ claimed: true });
      expect(await ports.idempotency.claim(claim(company, 'own', 'r1'))).toEqual({ claimed: true });
      expect(await ports.idempotency.claim(claim(company, 'own', 'r2'))).toEqual(inProgress('r1'));
    });

    it('lets only the claiming request complete the claim', async () => {
      const company = companyId();
      await ports.idempotency.claim(claim(company, 'k2', 'r1'));
      await expect(ports.idempotency.complete('live', company, 'k2', 'someone-else', response(), NOW)).rejects.toThrow();
      expect(await ports.idempotency.claim(claim(company, 'k2', 'r3'))).toEqual(inProgress('r1'));
    });

    it('releases only its own claim, and never a completed one', async () => {
      const company = companyId();
      await ports.idempotency.claim(claim(company, 'k3', 'r1'));
      await ports.idempotency.release('live', company, 'k3', 'someone-else');
      expect(await ports.idempotency.claim(claim(company, 'k3', 'r2'))).toEqual(inProgress('r1'));
      await ports.idempotency.complete('live', company, 'k3', 'r1', response(), NOW);
      await ports.idempotency.release('live', company, 'k3', 'r1');
      expect(await ports.idempotency.claim(claim(company, 'k3', 'r4'))).toMatchObject({ claimed: false, state: 'COMPLETED' });
      await ports.idempotency.claim(claim(company, 'k4', 'r1'));
      await ports.idempotency.release('live', company, 'k4', 'r1');
      expect(await ports.idempotency.claim(claim(company, 'k4', 'r2'))).toEqual({ claimed: true });
    });

    it('lets a stale in-progress claim be taken over, and an expired claim be used again', async () => {
      const company = companyId();
      await ports.idempotency.claim(claim(company, 'stale', 'r1'));
      const later = new Date(NOW.getTime() + 961_000);
      expect(await ports.idempotency.claim(claim(company, 'stale', 'r2', later))).toEqual({ claimed: true });
      await ports.idempotency.claim(claim(company, 'old', 'r1', NOW, 960, 60));
      await ports.idempotency.complete('live', company, 'old', 'r1', response(), NOW);
      expect(await ports.idempotency.claim(claim(company, 'old', 'r2', new Date(NOW.getTime() + 61_000)))).toEqual({ claimed: true });
    });
  });

  describe('deadlines', () => {
    it('gives up as unavailable, without touching storage, once the request’s deadline has passed', async () => {
      const unavailable = { code: 'SERVICE_UNAVAILABLE' };
      const company = companyId();
      await expect(ports.idempotency.claim(claim(company, 'late', 'r1'), EXPIRED())).rejects.toMatchObject(unavailable);
      await expect(ports.references.reserve(1, EXPIRED())).rejects.toMatchObject(unavailable);
      await expect(ports.reader.get('live', `case_${randomBase62(22)}`, EXPIRED())).rejects.toMatchObject(unavailable);
      await expect(ports.keys.get(randomBase62(16), EXPIRED())).rejects.toMatchObject(unavailable);
      await expect(ports.companies.get(company, EXPIRED())).rejects.toMatchObject(unavailable);
      expect(await ports.idempotency.claim(claim(company, 'late', 'r2'))).toEqual({ claimed: true });
      const c = newCase(company, 'LATE-1');
      expect(await writeOne(ports.writer, c, EXPIRED())).toMatchObject({ kind: 'failed' });
      expect(await ports.reader.get('live', c.stored.caseId)).toBeUndefined();
      expect(await ports.eventsOf('live', company, c.stored.caseId)).toEqual([]);
    });
  });

  describe('case references', () => {
    it('reserves disjoint consecutive blocks and refuses an empty one', async () => {
      const a = await ports.references.reserve(3);
      const b = await ports.references.reserve(2);
      expect(b >= a + 3 || a >= b + 2).toBe(true);
      await expect(ports.references.reserve(0)).rejects.toThrow();
    });
  });
});
