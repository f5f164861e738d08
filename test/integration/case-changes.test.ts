import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { toCaseView, type StoredCase } from '../../lib/cases/case-record.js';
import { buildCaseEvent, type CaseEvent } from '../../lib/cases/case-lifecycle.js';
import {
  confirmCases,
  recordDebtorVerification,
  settleCaseStatus,
  withdrawCaseFor,
  type ChangeCaseDeps,
} from '../../lib/cases/change-case.js';
import type { CaseChangeStore, CaseWriter, NewCase } from '../../lib/cases/ports.js';
import { DynamoCaseChangeStore } from '../../lib/adapters/dynamodb/case-change-store.js';
import { DynamoCaseWriter } from '../../lib/adapters/dynamodb/case-writer.js';
import { documentClient } from '../../lib/adapters/dynamodb/dynamo-client.js';
import { GSI2, keys } from '../../lib/adapters/dynamodb/table-keys.js';
import { eventFromItem } from '../../lib/adapters/dynamodb/event-items.js';
import type { Mode } from '../../lib/mode.js';
import { randomBase62 } from '../../lib/random-id.js';
import { config } from '../../lib/runtime/config.js';
import { MemoryCaseWriter } from '../support/memory-stores.js';

/**
 * On DynamoDB Local the verification worker also reads the table's stream (started by the global
 * setup) and acts on these cases: debtors cite `01000408`, which the Companies House stand-in
 * answers only after the registry adapter's timeout, so the worker leaves them PENDING and the outcomes here are the tests' own.
 *
 * The case changes (confirm, withdraw, a verification outcome, settling) over the CaseChangeStore
 * port, against the in-memory fake and against DynamoDB Local: the same races, the same answers.
 * Each change and its event are one transaction; a change that lost a race is asked again.
 */
interface World {
  writer: CaseWriter;
  changes: CaseChangeStore;
  /** Every event written for a case, oldest first. */
  eventsOf(stored: StoredCase): Promise<CaseEvent[]>;
}

function memoryWorld(): World {
  const writer = new MemoryCaseWriter();
  return {
    writer,
    changes: writer,
    eventsOf: async (stored) => writer.events.filter((e) => e.type === 'case.updated' && e.data.object.id === stored.caseId),
  };
}

function dynamoWorld(): World {
  const cfg = config();
  const client = documentClient(cfg);
  return {
    writer: new DynamoCaseWriter(client, cfg.tableName),
    changes: new DynamoCaseChangeStore(client, cfg.tableName),
    eventsOf: async (stored) => {
      // The event list's index partition of the case's shard; GSIs are eventually consistent (always caught up locally).
      const out = await client.send(
        new QueryCommand({
          TableName: cfg.tableName,
          IndexName: GSI2,
          KeyConditionExpression: 'gsi2pk = :pk',
          FilterExpression: 'caseId = :caseId',
          ExpressionAttributeValues: {
            ':pk': keys.eventListPartition(stored.mode, stored.companyId, keys.caseListShard(stored.caseId)),
            ':caseId': stored.caseId,
          },
        }),
      );
      return (out.Items ?? [])
        .map((item) => eventFromItem(item).event)
        .filter((e) => e.type === 'case.updated')
        .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
    },
  };
}

const CREATED = new Date('2026-03-01T12:00:00.000Z');
/** The stand-in answers this number too late every time: the worker keeps such a case PENDING. */
const UNANSWERED = '01000408';

function newCase(
  over: { mode?: Mode; debtorCompanyNo?: string; gate?: StoredCase['recoveryGate']; invoiceRef?: string; companyId?: string } = {},
): NewCase {
  const caseId = `case_${randomBase62(22)}`;
  const companyId = over.companyId ?? `cmp_${randomBase62(16)}`;
  const mode = over.mode ?? 'live';
  const invoiceRef = over.invoiceRef ?? `INV-${randomBase62(8)}`;
  const at = CREATED.toISOString();
  const stored: StoredCase = {
    caseId,
    companyId,
    reference: `PC-${randomBase62(3).toUpperCase()}-222`,
    status: 'DRAFT',
    recoveryGate: over.gate ?? 'AWAITING_CONFIRMATION',
    debtorName: 'Acme Widgets Ltd',
    debtorEmail: 'ap@acme.example',
    ...(over.debtorCompanyNo ? { debtorCompanyNo: over.debtorCompanyNo } : {}),
    invoiceRef,
    invoiceRefKey: invoiceRef.trim().normalize('NFC').toLowerCase(),
    invoiceDate: '2025-01-10',
    dueDate: '2025-02-10',
    principalPence: 125_050,
    currency: 'GBP',
    invoiceFileKey: `invoices/${companyId}/${randomBase62(32)}.pdf`,
    createdAt: at,
    updatedAt: at,
    createdByKeyId: 'KeyAAAAAAAAAAAAA',
    requestId: 'req-changes',
    mode,
    debtorVerification: { status: over.debtorCompanyNo ? 'PENDING' : 'NOT_REQUESTED' },
    statusHistory: [{ status: 'DRAFT', at }],
  };
  const audit = {
    caseId,
    companyId,
    mode,
    b2b: true,
    under10k: true,
    within6years: true,
    undisputed: true,
    attestedBy: 'J. Smith',
    attestedAt: at,
    keyId: 'KeyAAAAAAAAAAAAA',
    requestId: 'req-changes',
    sourceIp: '192.0.2.1',
  };
  return { stored, audit, event: buildCaseEvent(toCaseView(stored), at) };
}

const confirmedBy = { name: 'Dana Dashboard', email: 'dana@partner.example' };

describe.each([
  ['in memory', memoryWorld],
  ['on DynamoDB Local', dynamoWorld],
])('case changes %s', (_name, makeWorld) => {
  let world: World;
  let clock = CREATED.getTime();
  let deps: ChangeCaseDeps;
  beforeAll(() => {
    world = makeWorld();
    deps = { store: world.changes, now: () => new Date((clock += 1_000)) };
  });

  async function created(over: Parameters<typeof newCase>[0] = {}): Promise<StoredCase> {
    const c = newCase(over);
    const [outcome] = await world.writer.writeAll([c]);
    expect(outcome?.kind).toBe('created');
    return c.stored;
  }

  const confirm = (stored: StoredCase, companyId = stored.companyId) =>
    confirmCases(deps, {
      mode: stored.mode,
      companyId,
      caseIds: [stored.caseId],
      confirmedBy,
      requestId: 'req-confirm',
      source: 'dashboard',
    });

  test('a confirmed case with no debtor to verify is READY, with one event and DRAFT then READY in its history', async () => {
    const stored = await created();
    const [result] = await confirm(stored);
    expect(result?.result).toBe('confirmed');
    const after = await world.changes.get('live', stored.caseId);
    expect(after).toMatchObject({ status: 'READY', recoveryGate: 'CONFIRMED' });
    expect(after?.statusHistory?.map((h) => h.status)).toEqual(['DRAFT', 'READY']);
    const events = await world.eventsOf(stored);
    expect(events).toHaveLength(1);
    expect(events[0]?.data).toMatchObject({
      object: { id: stored.caseId, status: 'READY', recoveryGate: 'CONFIRMED' },
      previousAttributes: { status: 'DRAFT', recoveryGate: 'AWAITING_CONFIRMATION' },
    });
  });

  test('confirming twice answers already_confirmed and writes no second event', async () => {
    const stored = await created();
    expect((await confirm(stored))[0]?.result).toBe('confirmed');
    expect((await confirm(stored))[0]?.result).toBe('already_confirmed');
    expect(await world.eventsOf(stored)).toHaveLength(1);
  });

  test("another company's case is not_found and stays as it was", async () => {
    const stored = await created();
    expect((await confirm(stored, `cmp_${randomBase62(16)}`))[0]?.result).toBe('not_found');
    await expect(
      withdrawCaseFor(deps, { mode: 'live', companyId: `cmp_${randomBase62(16)}`, caseId: stored.caseId }),
    ).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect((await world.changes.get('live', stored.caseId))?.status).toBe('DRAFT');
    expect(await world.eventsOf(stored)).toHaveLength(0);
  });

  test('a live caller cannot change a test case', async () => {
    const stored = await created({ mode: 'test' });
    const [result] = await confirmCases(deps, {
      mode: 'live',
      companyId: stored.companyId,
      caseIds: [stored.caseId],
      confirmedBy,
      requestId: 'r',
      source: 'dashboard',
    });
    expect(result?.result).toBe('not_found');
  });

  test('a withdrawn case gives its invoiceRef up: the same invoiceRef is created again, not DUPLICATE', async () => {
    const stored = await created();
    const withdrawn = await withdrawCaseFor(deps, {
      mode: 'live',
      companyId: stored.companyId,
      caseId: stored.caseId,
      reason: 'sent in error',
    });
    expect(withdrawn.status).toBe('WITHDRAWN');
    expect(withdrawn.statusHistory?.at(-1)).toMatchObject({ status: 'WITHDRAWN', reason: 'sent in error' });
    const again = newCase({ companyId: stored.companyId, invoiceRef: stored.invoiceRef });
    expect((await world.writer.writeAll([again]))[0]?.kind).toBe('created');
    // ...and the new case holds it: a third is a duplicate of the second.
    const third = newCase({ companyId: stored.companyId, invoiceRef: stored.invoiceRef });
    expect((await world.writer.writeAll([third]))[0]).toMatchObject({ kind: 'duplicate', existingCaseId: again.stored.caseId });
  });

  test('withdrawing again answers the case unchanged and writes no second event', async () => {
    const stored = await created();
    await withdrawCaseFor(deps, { mode: 'live', companyId: stored.companyId, caseId: stored.caseId });
    const second = await withdrawCaseFor(deps, { mode: 'live', companyId: stored.companyId, caseId: stored.caseId, reason: 'again' });
    expect(second.statusHistory?.map((h) => h.status)).toEqual(['DRAFT', 'WITHDRAWN']);
    expect(await world.eventsOf(stored)).toHaveLength(1);
  });

  test('confirm and withdraw of the same case at once: one order wins, one event per change, a consistent history', async () => {
    const cases = await Promise.all(Array.from({ length: 10 }, () => created()));
    await Promise.all(
      cases.map((stored) =>
        Promise.all([confirm(stored), withdrawCaseFor(deps, { mode: 'live', companyId: stored.companyId, caseId: stored.caseId })]),
      ),
    );
    for (const stored of cases) {
      const after = (await world.changes.get('live', stored.caseId))!;
      const events = await world.eventsOf(stored);
      expect(after.status).toBe('WITHDRAWN');
      const statuses = after.statusHistory!.map((h) => h.status);
      // Confirmed first: DRAFT → READY → WITHDRAWN (two events); withdrawn first: DRAFT → WITHDRAWN (one; confirm is not_awaiting).
      if (after.recoveryGate === 'CONFIRMED') {
        expect(statuses).toEqual(['DRAFT', 'READY', 'WITHDRAWN']);
        expect(events.map((e) => e.data.object.status)).toEqual(['READY', 'WITHDRAWN']);
      } else {
        expect(statuses).toEqual(['DRAFT', 'WITHDRAWN']);
        expect(events).toHaveLength(1);
      }
      expect(events.at(-1)?.data.object).toMatchObject({ status: 'WITHDRAWN', statusHistory: after.statusHistory });
    }
  });

  test('two workers recording a verification for one case at once: one outcome, one event', async () => {
    const stored = await created({ gate: 'AUTO_ATTESTED', debtorCompanyNo: UNANSWERED });
    const outcome = { status: 'VERIFIED' as const, checkedAt: '2026-03-01T12:00:05.000Z' };
    const results = await Promise.all([
      recordDebtorVerification(deps, 'live', stored.caseId, outcome),
      recordDebtorVerification(deps, 'live', stored.caseId, { status: 'NOT_FOUND', checkedAt: '2026-03-01T12:00:06.000Z' }),
    ]);
    expect(results.filter((r) => r.kind === 'changed')).toHaveLength(1);
    expect(results.filter((r) => r.kind === 'unchanged' && r.reason === 'not_pending')).toHaveLength(1);
    expect(await world.eventsOf(stored)).toHaveLength(1);
  });

  test('a verification delivered twice writes no second event', async () => {
    const stored = await created({ gate: 'AUTO_ATTESTED', debtorCompanyNo: UNANSWERED });
    const outcome = { status: 'NAME_MISMATCH' as const, registeredName: 'OTHER LIMITED', checkedAt: '2026-03-01T12:00:05.000Z' };
    expect((await recordDebtorVerification(deps, 'live', stored.caseId, outcome)).kind).toBe('changed');
    expect(await recordDebtorVerification(deps, 'live', stored.caseId, outcome)).toMatchObject({
      kind: 'unchanged',
      reason: 'not_pending',
    });
    const after = await world.changes.get('live', stored.caseId);
    expect(after).toMatchObject({ status: 'ON_HOLD', debtorVerification: outcome });
    expect(after?.statusHistory?.at(-1)).toMatchObject({ status: 'ON_HOLD', reason: 'NAME_MISMATCH' });
    expect(await world.eventsOf(stored)).toHaveLength(1);
  });

  test('settling an auto-attested case without a debtor makes it READY once', async () => {
    const stored = await created({ gate: 'AUTO_ATTESTED' });
    const results = await Promise.all([settleCaseStatus(deps, 'live', stored.caseId), settleCaseStatus(deps, 'live', stored.caseId)]);
    // On DynamoDB Local the worker settles new cases too: of it and these two, one makes the change.
    expect(results.filter((r) => r.kind === 'changed').length).toBeLessThanOrEqual(1);
    expect((await world.changes.get('live', stored.caseId))?.status).toBe('READY');
    expect(await world.eventsOf(stored)).toHaveLength(1);
  });

  test('a case stored before the lifecycle existed is changed from its defaults', async () => {
    const c = newCase({ gate: 'AUTO_ATTESTED', debtorCompanyNo: UNANSWERED });
    delete c.stored.debtorVerification;
    delete c.stored.statusHistory;
    c.event = buildCaseEvent(toCaseView(c.stored), c.stored.createdAt);
    await world.writer.writeAll([c]);
    const result = await recordDebtorVerification(deps, 'live', c.stored.caseId, {
      status: 'VERIFIED',
      checkedAt: '2026-03-01T12:00:05.000Z',
    });
    expect(result.kind).toBe('changed');
    const after = await world.changes.get('live', c.stored.caseId);
    expect(after?.status).toBe('READY');
    expect(after?.statusHistory?.map((h) => h.status)).toEqual(['DRAFT', 'READY']);
  });
});
