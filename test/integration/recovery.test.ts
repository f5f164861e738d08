import { GetCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { FAN_OUT_STREAM, VERIFIER_STREAM } from '../../infra/contract/stream-consumers.js';
import { matchesFilterPattern } from '../../infra/local/match-filter-pattern.js';
import { DynamoCaseChangeStore } from '../../lib/adapters/dynamodb/case-change-store.js';
import { DynamoCaseLister } from '../../lib/adapters/dynamodb/case-lister.js';
import { DynamoCaseReader } from '../../lib/adapters/dynamodb/case-reader.js';
import { DynamoCaseWriter } from '../../lib/adapters/dynamodb/case-writer.js';
import { createDocumentClient, documentClient } from '../../lib/adapters/dynamodb/dynamo-client.js';
import { eventFromItem } from '../../lib/adapters/dynamodb/event-items.js';
import { DynamoRecoveryStore } from '../../lib/adapters/dynamodb/recovery-store.js';
import { GSI2, keys } from '../../lib/adapters/dynamodb/table-keys.js';
import { DynamoTestModeItemStore } from '../../lib/adapters/dynamodb/test-mode-item-store.js';
import { applyRecoveryUpdate, applyRecoveryUpdates } from '../../lib/cases/apply-recovery-update.js';
import { buildCaseEvent, type CaseEvent } from '../../lib/cases/case-lifecycle.js';
import { toCaseView, type StoredCase } from '../../lib/cases/case-record.js';
import { withdrawCaseFor } from '../../lib/cases/change-case.js';
import { computeAmounts } from '../../lib/cases/compute-amounts.js';
import { londonDate } from '../../lib/cases/dates.js';
import { listCasePayments } from '../../lib/cases/list-case-payments.js';
import { parseListQuery } from '../../lib/cases/list-cases.js';
import { formatPence } from '../../lib/cases/money.js';
import type { NewCase } from '../../lib/cases/ports.js';
import { recordPayment } from '../../lib/cases/record-payment.js';
import { CaseNotOpenError, PaymentExceedsOutstandingError, PaymentLimitReachedError } from '../../lib/errors.js';
import type { Mode } from '../../lib/mode.js';
import { randomBase62 } from '../../lib/random-id.js';
import { config } from '../../lib/runtime/config.js';

/**
 * The recovery core on DynamoDB Local (product rules "Recovery and money"): payments, back-office
 * updates and their races, through the use cases over the real adapters (the back office's route itself: recovery-updates.test.ts).
 */
const cfg = () => config();
let client: DynamoDBDocumentClient;
let store: DynamoRecoveryStore;
let changes: DynamoCaseChangeStore;
beforeAll(() => {
  client = documentClient(cfg());
  store = new DynamoRecoveryStore(client, cfg().tableName);
  changes = new DynamoCaseChangeStore(client, cfg().tableName);
});

const newCompany = () => `cmp_${randomBase62(16)}`;
const BY = { name: 'Rita Recovery', email: 'rita@recovery.example' };
/** A day well inside every case's window: after the invoice date, before today. */
const PAID_AT = '2025-03-01';

interface Made {
  stored: StoredCase;
  companyId: string;
}

/** A case stored as the create path stores it, already READY (its gates satisfied), without statutory interest unless asked. */
async function makeCase(options: { companyId?: string; mode?: Mode; principalPence?: number; claim?: boolean; invoiceRef?: string } = {}) {
  const companyId = options.companyId ?? newCompany();
  const mode = options.mode ?? 'live';
  const caseId = `case_${randomBase62(22)}`;
  const at = new Date(Date.now() - 60_000).toISOString();
  const invoiceRef = options.invoiceRef ?? `INV-${randomBase62(8)}`;
  const stored: StoredCase = {
    caseId,
    companyId,
    reference: `PC-${randomBase62(3).toUpperCase()}-RCV`,
    status: 'READY',
    recoveryGate: 'AUTO_ATTESTED',
    debtorName: 'Acme Widgets Ltd',
    debtorEmail: 'ap@acme.example',
    invoiceRef,
    invoiceRefKey: invoiceRef.toLowerCase(),
    invoiceDate: '2025-01-10',
    dueDate: '2025-02-10',
    principalPence: options.principalPence ?? 100_000,
    claimStatutoryInterest: options.claim ?? false,
    currency: 'GBP',
    invoiceFileKey: `invoices/${companyId}/${randomBase62(32)}.pdf`,
    createdAt: at,
    updatedAt: at,
    createdByKeyId: 'KeyAAAAAAAAAAAAA',
    requestId: 'req-recovery',
    mode,
    debtorVerification: { status: 'NOT_REQUESTED' },
    statusHistory: [
      { status: 'DRAFT', at },
      { status: 'READY', at },
    ],
  };
  const newCase: NewCase = {
    stored,
    audit: {
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
      requestId: 'req-recovery',
      sourceIp: '192.0.2.1',
    },
    event: buildCaseEvent(toCaseView(stored), at),
  };
  const [outcome] = await new DynamoCaseWriter(client, cfg().tableName).writeAll([newCase]);
  expect(outcome?.kind).toBe('created');
  return { stored, companyId } satisfies Made;
}

const pay = (made: Made, amount: number, paidAt = PAID_AT, mode: Mode = made.stored.mode) =>
  recordPayment(
    { store },
    { companyId: made.companyId, mode, caseId: made.stored.caseId, payment: { amount, paidAt }, requestId: 'req-pay', now: new Date() },
  );

const update = (made: Made, fields: Record<string, unknown>, updateId = `upd-${randomBase62(10)}`) =>
  applyRecoveryUpdate(
    { store },
    {
      companyId: made.companyId,
      mode: made.stored.mode,
      update: { updateId, caseId: made.stored.caseId, by: BY, ...fields } as never,
      requestId: 'req-bo',
      now: new Date(),
      source: 'back-office',
    },
  );

/** Every case.updated event of a case (its shard of the company's event listing). */
async function updatesOf(made: Made): Promise<CaseEvent[]> {
  const { stored } = made;
  const out = await client.send(
    new QueryCommand({
      TableName: cfg().tableName,
      IndexName: GSI2,
      KeyConditionExpression: 'gsi2pk = :pk',
      FilterExpression: 'caseId = :caseId AND eventType = :type',
      ExpressionAttributeValues: {
        ':pk': keys.eventListPartition(stored.mode, made.companyId, keys.caseListShard(stored.caseId)),
        ':caseId': stored.caseId,
        ':type': 'case.updated',
      },
    }),
  );
  return (out.Items ?? []).map((item) => eventFromItem(item).event).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
}

const read = async (made: Made) => (await store.get(made.stored.mode, made.stored.caseId))!;

describe('recording a payment', () => {
  it('records the payment, answers it with the case after it, and announces it with one case.updated event carrying the earlier amounts', async () => {
    const made = await makeCase();
    const { payment, case: view } = await pay(made, 250.5);
    expect(payment).toMatchObject({
      caseId: made.stored.caseId,
      source: 'DIRECT',
      amount: '250.50',
      paidAt: PAID_AT,
      reference: null,
      livemode: true,
    });
    expect(payment.id).toMatch(/^pay_/);
    expect(view).toMatchObject({ status: 'READY', closure: null, amounts: { paid: '250.50', outstanding: '749.50' } });
    const events = await updatesOf(made);
    expect(events).toHaveLength(1);
    expect(events[0]!.type).toBe('case.updated');
    expect(events[0]!.data).toMatchObject({
      object: { amounts: { paid: '250.50' } },
      previousAttributes: { amounts: { paid: '0.00', outstanding: '1000.00' } },
    });
    expect(await listCasePayments({ store }, { companyId: made.companyId, mode: 'live', caseId: made.stored.caseId })).toEqual([payment]);
  });

  it('closes the case PAID_IN_FULL in the same transaction when nothing is left outstanding, in one event, and frees its invoiceRef', async () => {
    const made = await makeCase();
    await pay(made, 400);
    const { case: view } = await pay(made, 600);
    expect(view.status).toBe('CLOSED');
    expect(view.closure).toEqual({ reason: 'PAID_IN_FULL', at: view.updatedAt });
    expect(view.statusHistory.at(-1)).toEqual({ status: 'CLOSED', at: view.updatedAt, reason: 'PAID_IN_FULL' });
    expect(view.amounts).toMatchObject({ paid: '1000.00', outstanding: '0.00' });
    const events = await updatesOf(made);
    // One event per payment; the closing payment's reports the status, closure and amounts it changed.
    expect(events).toHaveLength(2);
    expect(events[1]!.data).toMatchObject({
      object: { status: 'CLOSED' },
      previousAttributes: { status: 'READY', closure: null, amounts: { paid: '400.00', outstanding: '600.00' } },
    });
    // The invoiceRef is free again: a new case with it is created, and the look-up finds both, at most one open.
    const again = await makeCase({ companyId: made.companyId, invoiceRef: made.stored.invoiceRef });
    const found = await new DynamoCaseLister(client, cfg().tableName).findByInvoiceRef('live', made.companyId, made.stored.invoiceRefKey);
    expect(found.map((c) => c.caseId).sort()).toEqual([made.stored.caseId, again.stored.caseId].sort());
    // A final case takes no payment and cannot be withdrawn.
    await expect(pay(made, 1)).rejects.toBeInstanceOf(CaseNotOpenError);
    await expect(
      withdrawCaseFor({ store: changes, now: () => new Date() }, { mode: 'live', companyId: made.companyId, caseId: made.stored.caseId }),
    ).rejects.toMatchObject({ code: 'CASE_NOT_OPEN', extensions: { caseStatus: 'CLOSED' } });
  });

  it('refuses an amount above today\u2019s outstanding with PAYMENT_EXCEEDS_OUTSTANDING carrying it, and records nothing', async () => {
    const made = await makeCase();
    await expect(pay(made, 1000.01)).rejects.toMatchObject({ code: 'PAYMENT_EXCEEDS_OUTSTANDING', extensions: { outstanding: '1000.00' } });
    expect((await read(made)).revision).toBeUndefined();
    expect(await updatesOf(made)).toHaveLength(0);
  });

  it('refuses another company\u2019s or the other mode\u2019s case as not found', async () => {
    const made = await makeCase();
    await expect(
      recordPayment(
        { store },
        {
          companyId: newCompany(),
          mode: 'live',
          caseId: made.stored.caseId,
          payment: { amount: 1, paidAt: PAID_AT },
          requestId: 'r',
          now: new Date(),
        },
      ),
    ).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(pay(made, 1, PAID_AT, 'test')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(listCasePayments({ store }, { companyId: newCompany(), mode: 'live', caseId: made.stored.caseId })).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
  });

  it('lets only one of two payments racing through when each is more than half the outstanding', async () => {
    const made = await makeCase();
    const results = await Promise.allSettled([pay(made, 600), pay(made, 700)]);
    const won = results.filter((r) => r.status === 'fulfilled');
    const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    expect(lost[0]!.reason).toBeInstanceOf(PaymentExceedsOutstandingError);
    const after = await read(made);
    expect(after.paymentFacts).toHaveLength(1);
    expect(await updatesOf(made)).toHaveLength(1);
    expect(await listCasePayments({ store }, { companyId: made.companyId, mode: 'live', caseId: made.stored.caseId })).toHaveLength(1);
  });

  it('keeps a payment racing a withdrawal consistent: the payment lands before the withdrawal, or is refused CASE_NOT_OPEN', async () => {
    for (let i = 0; i < 3; i++) {
      const made = await makeCase();
      const [payment, withdrawal] = await Promise.allSettled([
        pay(made, 100),
        withdrawCaseFor({ store: changes, now: () => new Date() }, { mode: 'live', companyId: made.companyId, caseId: made.stored.caseId }),
      ]);
      expect(withdrawal.status).toBe('fulfilled');
      const after = await read(made);
      expect(after.status).toBe('WITHDRAWN');
      const events = await updatesOf(made);
      if (payment.status === 'fulfilled') {
        expect(after.paymentFacts).toHaveLength(1);
        expect(events).toHaveLength(2);
        // The withdrawal's event shows the payment it came after.
        expect(events[1]!.data.object).toMatchObject({ status: 'WITHDRAWN', amounts: { paid: '100.00' } });
      } else {
        expect(payment.reason).toBeInstanceOf(CaseNotOpenError);
        expect(after.paymentFacts ?? []).toHaveLength(0);
        expect(events).toHaveLength(1);
      }
    }
  });

  it('takes at most 100 payments; GET after 100 is still one read of the case item, with exact amounts', async () => {
    const made = await makeCase({ principalPence: 900_000, claim: true });
    for (let i = 0; i < 100; i++) await pay(made, 1.01, `2025-0${3 + (i % 5)}-1${i % 10}`);
    await expect(pay(made, 1)).rejects.toBeInstanceOf(PaymentLimitReachedError);

    const counting = createDocumentClient(cfg());
    const sent: string[] = [];
    counting.middlewareStack.add(
      (next, context) => (args) => {
        sent.push(String(context.commandName));
        return next(args);
      },
      { step: 'initialize' },
    );
    const now = new Date();
    const stored = await new DynamoCaseReader(counting, cfg().tableName).get('live', made.stored.caseId);
    const view = toCaseView(stored!, { now });
    expect(sent).toEqual(['GetItemCommand']);
    // The same figures from the payment items, computed independently of the case's facts.
    const payments = await listCasePayments({ store }, { companyId: made.companyId, mode: 'live', caseId: made.stored.caseId });
    expect(payments).toHaveLength(100);
    expect(payments.map((p) => p.id)).toEqual([...payments].sort((a, b) => a.recordedAt.localeCompare(b.recordedAt)).map((p) => p.id));
    expect(view.amounts).toEqual(
      computeAmounts({
        principalPence: 900_000,
        dueDate: '2025-02-10',
        claimStatutoryInterest: true,
        payments: payments.map((p) => ({ amountPence: Number(p.amount.replace('.', '')), paidAt: p.paidAt })),
        asOf: londonDate(now.getTime()),
      }),
    );
    expect(view.amounts.paid).toBe(formatPence(10_100));
  }, 60_000);
});

describe('back-office updates', () => {
  it('starts recovery on a READY case, closes it with a reason, one event each with the earlier status and closure', async () => {
    const made = await makeCase();
    expect(await update(made, { type: 'recovery_started' })).toMatchObject({ result: 'applied', case: { status: 'IN_RECOVERY' } });
    const closed = await update(made, { type: 'closed', reason: 'SETTLED', note: 'Agreed 800.00' });
    expect(closed).toMatchObject({ result: 'applied', case: { status: 'CLOSED', closure: { reason: 'SETTLED', note: 'Agreed 800.00' } } });
    const events = await updatesOf(made);
    expect(events.map((e) => e.type === 'case.updated' && e.data.previousAttributes)).toEqual([
      { status: 'READY' },
      { status: 'IN_RECOVERY', closure: null },
    ]);
    expect(await update(made, { type: 'recovery_started' })).toMatchObject({ result: 'invalid_state', error: { code: 'CASE_NOT_OPEN' } });
  });

  it('refuses what the rules refuse, leaving the case unchanged: closed before recovery started, PAID_IN_FULL with money outstanding', async () => {
    const made = await makeCase();
    expect(await update(made, { type: 'closed', reason: 'DISPUTED' })).toMatchObject({
      result: 'invalid_state',
      error: { code: 'INVALID_TRANSITION' },
    });
    await update(made, { type: 'recovery_started' });
    expect(await update(made, { type: 'closed', reason: 'PAID_IN_FULL' })).toMatchObject({
      result: 'invalid_state',
      error: { code: 'INVALID_TRANSITION' },
    });
    expect((await read(made)).status).toBe('IN_RECOVERY');
  });

  it('applies the same updateId once: again later, or twice at once, answers already_applied and changes nothing', async () => {
    const made = await makeCase();
    await update(made, { type: 'recovery_started' });
    const updateId = `upd-${randomBase62(10)}`;
    const both = await Promise.all([
      update(made, { type: 'payment_collected', amount: 100, paidAt: PAID_AT }, updateId),
      update(made, { type: 'payment_collected', amount: 100, paidAt: PAID_AT }, updateId),
    ]);
    expect(both.map((o) => o.result).sort()).toEqual(['already_applied', 'applied']);
    expect((await update(made, { type: 'payment_collected', amount: 100, paidAt: PAID_AT }, updateId)).result).toBe('already_applied');
    const after = await read(made);
    expect(after.paymentFacts).toEqual([{ amountPence: 10_000, paidAt: PAID_AT }]);
    const payments = await listCasePayments({ store }, { companyId: made.companyId, mode: 'live', caseId: made.stored.caseId });
    expect(payments).toMatchObject([{ source: 'COLLECTED', amount: '100.00' }]);
    expect(await store.findUpdate('live', made.companyId, updateId)).toMatchObject({
      updateId,
      caseId: made.stored.caseId,
      by: BY,
      requestId: 'req-bo',
      source: 'back-office',
    });
  });

  it('lets one of a closing payment and a `closed` update racing win; the other is refused and the case closes once', async () => {
    const made = await makeCase();
    await update(made, { type: 'recovery_started' });
    const [payment, closing] = await Promise.allSettled([pay(made, 1000), update(made, { type: 'closed', reason: 'UNRECOVERABLE' })]);
    const after = await read(made);
    expect(after.status).toBe('CLOSED');
    expect(after.statusHistory!.filter((h) => h.status === 'CLOSED')).toHaveLength(1);
    if (payment.status === 'fulfilled') {
      expect(after.closure?.reason).toBe('PAID_IN_FULL');
      expect(closing).toMatchObject({ status: 'fulfilled', value: { result: 'invalid_state', error: { code: 'CASE_NOT_OPEN' } } });
    } else {
      expect(payment.reason).toBeInstanceOf(CaseNotOpenError);
      expect(after.closure?.reason).toBe('UNRECOVERABLE');
    }
    expect(await updatesOf(made)).toHaveLength(2);
  });

  it('answers a batch in order, one result per update, each standing alone', async () => {
    const made = await makeCase();
    const other = await makeCase({ companyId: made.companyId });
    const results = await applyRecoveryUpdates(
      { store },
      {
        companyId: made.companyId,
        mode: 'live',
        updates: [
          { updateId: 'a', caseId: made.stored.caseId, type: 'recovery_started', by: BY },
          { updateId: 'b', caseId: made.stored.caseId, type: 'closed', reason: 'INSOLVENT', by: BY },
          { updateId: 'c', caseId: `case_${randomBase62(22)}`, type: 'recovery_started', by: BY },
          { updateId: 'd', caseId: other.stored.caseId, type: 'closed', reason: 'INSOLVENT', by: BY },
          { updateId: 'e', caseId: other.stored.caseId, type: 'payment_collected', amount: 1.001, paidAt: PAID_AT, by: BY },
          { updateId: 'f', caseId: other.stored.caseId, type: 'payment_collected', amount: 5, paidAt: '2099-01-01', by: BY },
        ],
        requestId: 'req-batch',
        now: new Date(),
        source: 'back-office',
      },
    );
    expect(results.map((r) => [r.updateId, r.result])).toEqual([
      ['a', 'applied'],
      ['b', 'applied'],
      ['c', 'not_found'],
      ['d', 'invalid_state'],
      ['e', 'invalid'],
      ['f', 'invalid'],
    ]);
    expect(results[4]!.message).toMatch(/2 decimal/);
    expect(results[5]!.message).toMatch(/after today/);
    expect((await read(made)).status).toBe('CLOSED');
    expect((await read(other)).status).toBe('READY');
  });
});

describe('the stream', () => {
  /** An item as the stream's image carries it. */
  async function image(key: { pk: string; sk: string }) {
    const out = await client.send(new GetCommand({ TableName: cfg().tableName, Key: key, ConsistentRead: true }));
    return marshall(out.Item!, { removeUndefinedValues: true });
  }

  it('a payment\u2019s records reach the webhook fan-out once, as its event item\u2019s INSERT, and the debtor verifier not at all', async () => {
    const made = await makeCase();
    const caseKey = keys.case('live', made.stored.caseId);
    const oldCase = await image(caseKey);
    await pay(made, 10);
    const [event] = await updatesOf(made);
    const records = [
      { eventName: 'MODIFY', dynamodb: { OldImage: oldCase, NewImage: await image(caseKey) } },
      { eventName: 'INSERT', dynamodb: { NewImage: await image(keys.event('live', event!.id)) } },
      { eventName: 'INSERT', dynamodb: { NewImage: await image(keys.payment('live', made.stored.caseId, 1)) } },
    ];
    const taken = (pattern: object) => records.flatMap((r, i) => (matchesFilterPattern(pattern, r) ? [i] : []));
    expect(taken(FAN_OUT_STREAM.filterPattern)).toEqual([1]);
    expect(taken(VERIFIER_STREAM.filterPattern)).toEqual([]);
    // The same record delivered twice makes no second event (events are written only in the change's
    // transaction, never by a consumer) and one delivery per endpoint (the fan-out's own guarantee:
    // test/unit/webhooks/delivery-use-cases.test.ts, "a stream record seen twice keeps one delivery per endpoint").
    expect(await updatesOf(made)).toHaveLength(1);
  });
});

describe('lists and test data', () => {
  it('lists cases by the new statuses IN_RECOVERY and CLOSED', async () => {
    const companyId = newCompany();
    const [inRecovery, closed, ready] = await Promise.all([makeCase({ companyId }), makeCase({ companyId }), makeCase({ companyId })]);
    await update(inRecovery, { type: 'recovery_started' });
    await pay(closed, 1000);
    const lister = new DynamoCaseLister(client, cfg().tableName);
    const page = (status: 'IN_RECOVERY' | 'CLOSED' | 'READY') =>
      lister.page({ mode: 'live', companyId, filters: { status }, limit: 100 }).then((p) => p.cases.map((c) => c.caseId));
    expect(await page('IN_RECOVERY')).toEqual([inRecovery.stored.caseId]);
    expect(await page('CLOSED')).toEqual([closed.stored.caseId]);
    expect(await page('READY')).toEqual([ready.stored.caseId]);
    // The list's query parameter takes them too.
    expect(parseListQuery({ status: 'IN_RECOVERY' }, undefined).filters.status).toBe('IN_RECOVERY');
    expect(parseListQuery({ status: 'CLOSED' }, undefined).filters.status).toBe('CLOSED');
  });

  it('clears a test case\u2019s payments and recovery update records with the case', async () => {
    const made = await makeCase({ mode: 'test' });
    await update(made, { type: 'recovery_started' }, 'upd-test-1');
    await pay(made, 10);
    await update(made, { type: 'payment_collected', amount: 20, paidAt: PAID_AT }, 'upd-test-2');
    await new DynamoTestModeItemStore(client, cfg().tableName).clearTestItems(made.companyId);
    const left = await client.send(
      new QueryCommand({
        TableName: cfg().tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': keys.case('test', made.stored.caseId).pk },
        ConsistentRead: true,
      }),
    );
    expect(left.Items ?? []).toEqual([]);
    expect(await store.findUpdate('test', made.companyId, 'upd-test-1')).toBeUndefined();
    expect(await store.findUpdate('test', made.companyId, 'upd-test-2')).toBeUndefined();
  });
});
