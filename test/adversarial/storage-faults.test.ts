import { createHash } from 'node:crypto';
import { config } from '../../lib/runtime/config.js';
import { DynamoCaseWriter } from '../../lib/adapters/dynamodb/case-writer.js';
import { DynamoIdempotencyStore } from '../../lib/adapters/dynamodb/idempotency-store.js';
import { DynamoReferenceAllocator } from '../../lib/adapters/dynamodb/reference-allocator.js';
import { DynamoCompanyStore } from '../../lib/adapters/dynamodb/company-store.js';
import { DynamoApiKeyStore } from '../../lib/adapters/dynamodb/api-key-store.js';
import { documentClient } from '../../lib/adapters/dynamodb/dynamo-client.js';
import { S3InvoiceFileStore } from '../../lib/adapters/s3/invoice-file-store.js';
import { DynamoUploadRecords } from '../../lib/adapters/dynamodb/upload-records.js';
import { RecordedInvoiceFiles } from '../../lib/adapters/recorded-invoice-files.js';
import { buildCreateCasesHandler } from '../../functions/create-cases.js';
import { caseCreationAdapters } from '../../lib/adapters/production-adapters.js';
import { lambdaContext, newPartner, parse, type ParsedResult, type Partner } from '../support/fixtures.js';
import { checkedInvoke } from '../support/contract.js';
import {
  checkStorageInvariants,
  createEvent,
  outcome,
  postCases,
  readCase,
  scanTable,
  uploadInvoice,
  validCase,
  type CreatedItem,
  type RejectedItem,
} from '../support/cases.js';
import { faultyDocumentClient, faultyS3Client, type Fault } from '../support/faulty-client.js';
import { seededRandom } from '../support/seeded-random.js';
import { recordCounts } from './summary.js';
import { MODES } from '../../lib/mode.js';

/**
 * Storage faults on every storage call of the create path (the Idempotency-Key claim, the
 * company read, the reference counter, the upload records, the invoice HEAD, the case transactions, the claim's
 * completion and its release): throttling, transaction conflicts, timeouts, internal errors and
 * lost responses (the call took effect, its answer never arrived).
 *
 * Two drivers: a matrix that puts each fault kind on each call once (and, for the calls the
 * product retries itself, until the retries run out), and SEEDED random faults over many batches
 * with and without Idempotency-Keys, re-sent the way a client retries. Whether a call fails is a
 * pure function of (seed, round, call identity, occurrence), so a run replays exactly (FAULT_SEED)
 * whatever order the parallel calls happen in.
 *
 * Afterwards the table is scanned for the storage invariants, every case id ever reported is
 * read back, and a ledger of every answer checks that nothing was lost: each case in the table
 * was written by a request that answered 2xx and listed that very case in `created`. Finally
 * everything is resubmitted without faults until each invoiceRef has exactly one case.
 */
const ROUNDS = process.env.DEEP ? 400 : 40;
const FAULT_RATE = 0.2;
const FAULTS: Fault[] = ['throttle', 'conflict', 'timeout', 'internal', 'lost-response'];
const SEED = Number(process.env.FAULT_SEED ?? 7);
/** Our writer retries a transaction at most this often in these tests (fast backoff). */
const WRITER_POLICY = { maxAttempts: 3, baseDelayMs: 2, maxDelayMs: 10 };
/**
 * A round left in doubt is settled by one more same-token attempt, in production 5 s after its
 * first (DynamoDB's advice for a transaction still in progress). None is ever in progress here (the
 * fault client's timeouts never reach DynamoDB Local, which applies a transaction within its call),
 * so the settling attempt need not wait: hundreds of faulted rounds would otherwise wait 5 s each.
 */
const WRITER_OPTIONS = { settleAfterMs: 20 };

type Target = 'claim' | 'company' | 'counter' | 'records' | 'head' | 'write' | 'verify' | 'complete' | 'release' | 'other';

/** Which storage call of the create path this is, and a stable identity for it (no random ids). */
/** A key's identity without the (random) company id: guards and claims have a partition each. */
const stableKey = (key: Record<string, unknown>) =>
  String(key.pk ?? '').replace(/^(INVREF|IDEMPOTENCY)#(TEST#)?cmp_[0-9A-Za-z]+#/, '$1#$2');

function callOf(commandName: string, input: Record<string, unknown>): { target: Target; id: string } {
  const key = (input.Key ?? {}) as Record<string, unknown>;
  const sk = String(key.sk ?? '');
  const id = stableKey(key);
  switch (commandName) {
    case 'PutItemCommand': {
      const item = (input.Item ?? {}) as Record<string, unknown>;
      return item.type === 'IDEMPOTENCY_CLAIM' ? { target: 'claim', id: stableKey(item) } : { target: 'other', id: stableKey(item) };
    }
    case 'UpdateItemCommand':
      if (id.startsWith('IDEMPOTENCY#')) return { target: 'complete', id };
      if (id.startsWith('COUNTER#')) return { target: 'counter', id };
      return { target: 'other', id };
    case 'DeleteItemCommand':
      return { target: 'release', id };
    case 'GetItemCommand':
      if (sk === 'PROFILE') return { target: 'company', id: sk };
      if (id.startsWith('INVREF#')) return { target: 'verify', id };
      return { target: 'other', id };
    case 'BatchGetItemCommand': {
      const tables = Object.values((input.RequestItems ?? {}) as Record<string, { Keys?: Record<string, unknown>[] }>);
      const first = tables[0]?.Keys?.[0] ?? {};
      // The upload records of the batch's invoice files, or the read-back of a case transaction whose answer was lost (its guards).
      if (String(first.pk ?? '').startsWith('UPLOAD#')) return { target: 'records', id: 'uploads' };
      return String(first.pk ?? '').startsWith('INVREF#')
        ? { target: 'verify', id: stableKey(first) }
        : { target: 'other', id: commandName };
    }
    case 'TransactWriteItemsCommand': {
      const first = (input.TransactItems as { Put?: { Item?: Record<string, unknown> } }[] | undefined)?.[0]?.Put?.Item;
      return { target: 'write', id: stableKey(first ?? {}) };
    }
    case 'HeadObjectCommand':
      return { target: 'head', id: 'invoice' };
    default:
      return { target: 'other', id: commandName };
  }
}

/** A number in [0, 1) determined by the text. */
function unit(text: string): number {
  return createHash('sha256').update(text).digest().readUInt32BE(0) / 2 ** 32;
}

/** The fault plan of the moment; the faulty clients consult it on every call. */
type Decide = (call: { target: Target; id: string }) => Fault | undefined;
let plan: Decide = () => undefined;
const injectedByTarget: Record<string, number> = {};

const ddb = faultyDocumentClient({
  decide: (name, input) => {
    const call = callOf(name, input);
    const fault = plan(call);
    if (fault) injectedByTarget[call.target] = (injectedByTarget[call.target] ?? 0) + 1;
    return fault;
  },
});
const s3 = faultyS3Client({
  decide: (name, input) => {
    const call = callOf(name, input);
    const fault = plan(call);
    if (fault) injectedByTarget[call.target] = (injectedByTarget[call.target] ?? 0) + 1;
    return fault;
  },
});

function faultyHandler() {
  const table = config().tableName;
  return buildCreateCasesHandler({
    ...caseCreationAdapters(),
    // Authentication stays reliable here: its failures are plain 500s before anything else runs.
    keys: new DynamoApiKeyStore(documentClient(config()), table),
    companies: new DynamoCompanyStore(ddb.client, table),
    writer: new DynamoCaseWriter(ddb.client, table, WRITER_POLICY, WRITER_OPTIONS),
    idempotency: new DynamoIdempotencyStore(ddb.client, table),
    // Blocks of one reference: every batch writes the counter, so its faults are exercised on every request.
    references: new DynamoReferenceAllocator(ddb.client, table, 1),
    files: new RecordedInvoiceFiles(new DynamoUploadRecords(ddb.client, table), new S3InvoiceFileStore(s3.client, config().bucketName)),
  });
}

/**
 * Every answer the tests received, by request id. A case in the table carries the id of the
 * request that wrote it, so each case can be traced to what its writer told the client.
 */
interface Answer {
  status: number;
  created: Set<string>;
  rejectedCodes: Map<string, string>;
}
const answers = new Map<string, Answer>();
let invariantsChecked = 0;

async function send(
  handler: ReturnType<typeof faultyHandler>,
  partner: Partner,
  cases: unknown[],
  idempotencyKey?: string,
): Promise<ParsedResult> {
  const event = createEvent(partner.apiKey, { cases }, idempotencyKey ? { 'Idempotency-Key': idempotencyKey } : {});
  const res = parse(await checkedInvoke(handler, event, lambdaContext()));
  expect([200, 201, 409, 500, 503]).toContain(res.statusCode);
  const answer: Answer = { status: res.statusCode, created: new Set(), rejectedCodes: new Map() };
  if (res.statusCode < 300) {
    const { created, rejected } = outcome(res);
    expect([...created, ...rejected].map((i) => i.index).sort((a, b) => a - b)).toEqual(cases.map((_, i) => i));
    for (const c of created) answer.created.add(c.id);
    for (const r of rejected) answer.rejectedCodes.set(String(r.invoiceRef), r.code);
  }
  answers.set(event.requestContext.requestId, answer);
  return res;
}

/** Each case in scope was written by a request that answered 2xx and reported that case created. */
function ledgerViolations(items: Record<string, unknown>[], companyIds: ReadonlySet<string>): string[] {
  const violations: string[] = [];
  for (const item of items) {
    if (item.type !== 'CASE' || !companyIds.has(item.companyId as string)) continue;
    invariantsChecked++;
    const answer = answers.get(item.requestId as string);
    const id = `${item.caseId as string} (${item.invoiceRef as string})`;
    if (!answer) violations.push(`case ${id} was written by a request no test sent`);
    else if (answer.status >= 300) violations.push(`case ${id} was written by a request answered ${answer.status}`);
    else if (!answer.created.has(item.caseId as string)) {
      violations.push(
        `case ${id} was written by a request that reported it ${answer.rejectedCodes.get(item.invoiceRef as string) ?? 'missing'}, not created`,
      );
    }
  }
  return violations;
}

/** invoiceRef → the one case the table holds for it, for one company (fails on two). */
function casesByRef(items: Record<string, unknown>[], companyId: string): Map<string, string> {
  const byRef = new Map<string, string>();
  for (const item of items) {
    if (item.type !== 'CASE' || item.companyId !== companyId) continue;
    const ref = item.invoiceRef as string;
    if (byRef.has(ref)) throw new Error(`two cases for ${companyId} ${ref}`);
    byRef.set(ref, item.caseId as string);
  }
  return byRef;
}

let partners: Partner[];
const files = new Map<string, string>();
let companyIds: Set<string>;

afterEach(() => {
  plan = () => undefined;
});

afterAll(() => {
  const injected = [ddb.counter, s3.counter].reduce((sum, c) => sum + Object.values(c.injected).reduce((a, b) => a + b, 0), 0);
  const byKind = Object.fromEntries(FAULTS.map((f) => [f, ddb.counter.injected[f] + s3.counter.injected[f]]));
  recordCounts('storage-faults', { faultsInjected: injected, invariantsChecked });
  console.log(
    `storage faults: ${injected} faults injected, by kind ${JSON.stringify(byKind)}, by call ${JSON.stringify(injectedByTarget)}; ${answers.size} requests; ${invariantsChecked} invariants checked`,
  );
});

type Mode = 'once' | 'exhaust';

interface Cell {
  target: Target;
  fault: Fault;
  mode: Mode;
  withKey: boolean;
}

/** Each call × each fault kind; `exhaust` keeps failing the same call (with throttling) after the first fault. */
function matrix(): Cell[] {
  const spec: { target: Target; keyOnly?: boolean; modes: Mode[] }[] = [
    { target: 'claim', keyOnly: true, modes: ['once'] },
    { target: 'company', modes: ['once'] },
    { target: 'counter', modes: ['once'] },
    { target: 'records', modes: ['once', 'exhaust'] },
    // The HEAD runs only for a file without an upload record: the records read fails throughout.
    { target: 'head', modes: ['once'] },
    { target: 'write', modes: ['once', 'exhaust'] },
    { target: 'complete', keyOnly: true, modes: ['once', 'exhaust'] },
    // The release runs only when the request fails before writing: the counter fails first.
    { target: 'release', keyOnly: true, modes: ['once'] },
    // The read-back runs only when a transaction's retries ran out after a lost answer.
    { target: 'verify', modes: ['once'] },
  ];
  const cells: Cell[] = [];
  for (const { target, keyOnly, modes } of spec) {
    for (const fault of FAULTS) {
      for (const mode of modes) {
        for (const withKey of keyOnly ? [true] : [true, false]) cells.push({ target, fault, mode, withKey });
      }
    }
  }
  return cells;
}

// Once per mode: test mode has the same storage semantics as live, under the same faults.
describe.each(MODES)('storage faults (%s mode)', (apiMode) => {
  beforeAll(async () => {
    partners = [
      await newPartner(['cases:read', 'cases:write'], { mode: apiMode }),
      await newPartner(['cases:read', 'cases:write'], { mode: apiMode }),
    ];
    for (const p of partners) files.set(p.companyId, await uploadInvoice(p.apiKey));
    companyIds = new Set(partners.map((p) => p.companyId));
  });

  it('lose nothing when each kind of fault hits each storage call of the create path', async () => {
    const handler = faultyHandler();
    const cells = matrix();
    const reported = new Map<string, string>();
    const firstStatuses: Record<string, number[]> = {};

    for (const [n, cell] of cells.entries()) {
      const partner = partners[n % 2]!;
      const refs = [0, 1, 2].map((i) => `M-${n}-${i}`);
      // A process takes references from the counter a block at a time: the counter and release
      // cells get a fresh process (handler), so their request does reach the counter.
      const cellHandler = cell.target === 'counter' || cell.target === 'release' ? faultyHandler() : handler;
      let armed = true;
      let hit: string | undefined;
      let lostWrite: string | undefined;
      plan = (call) => {
        if (!armed) return undefined;
        if (cell.target === 'release' && call.target === 'counter') return 'internal';
        if (cell.target === 'head' && call.target === 'records') return 'internal';
        if (cell.target === 'verify' && call.target === 'write') {
          if (lostWrite === undefined) {
            lostWrite = call.id;
            return 'lost-response';
          }
          return call.id === lostWrite ? 'throttle' : undefined;
        }
        if (call.target !== cell.target) return undefined;
        if (hit === undefined) {
          hit = call.id;
          return cell.fault;
        }
        return cell.mode === 'exhaust' && call.id === hit ? 'throttle' : undefined;
      };

      // A client: resend on 500 with the same key; on 409 take the stored result or move to a new
      // key; resubmit TEMPORARY_FAILURE items (under a new key) until every case exists.
      let pending = refs;
      let key = cell.withKey ? `m-${n}-0` : undefined;
      for (let step = 0; pending.length > 0; step++) {
        if (step > 8) throw new Error(`cell ${JSON.stringify(cell)} did not converge: ${pending.join(', ')} pending`);
        const res = await send(
          cellHandler,
          partner,
          pending.map((invoiceRef) => validCase(files.get(partner.companyId)!, { invoiceRef })),
          key,
        );
        if (step === 0) (firstStatuses[`${cell.target}/${cell.mode}`] ??= []).push(res.statusCode);
        armed = false;
        if (res.statusCode === 500 || res.statusCode === 503) continue;
        let created: CreatedItem[];
        let rejected: RejectedItem[];
        if (res.statusCode === 409) {
          if (res.body.state !== 'COMPLETED') {
            key = `m-${n}-${step + 1}`;
            continue;
          }
          ({ created, rejected } = { created: res.body.created as CreatedItem[], rejected: res.body.rejected as RejectedItem[] });
        } else {
          ({ created, rejected } = outcome(res));
        }
        for (const c of created) reported.set(`${partner.companyId}|${c.invoiceRef}`, c.id);
        for (const r of rejected) {
          expect(['TEMPORARY_FAILURE', 'DUPLICATE']).toContain(r.code);
          if (r.code === 'DUPLICATE') {
            // Only a case this client was told about may be named as the existing one.
            expect(r.existingCaseId).toBe(reported.get(`${partner.companyId}|${r.invoiceRef}`));
          }
        }
        pending = rejected.filter((r) => r.code === 'TEMPORARY_FAILURE').map((r) => r.invoiceRef as string);
        if (key) key = `m-${n}-${step + 1}`;
      }
    }

    // Before any write, one transient fault is absorbed by the retry layer; a failure that lasts
    // (the counter, in the release cells) fails the whole request with 503 (nothing written, the key
    // given back). From the first write on, failures are per case.
    for (const target of ['claim', 'company', 'counter']) {
      expect(firstStatuses[`${target}/once`]?.length).toBeGreaterThan(0);
      for (const status of firstStatuses[`${target}/once`] ?? []) expect([200, 201]).toContain(status);
    }
    expect(new Set(firstStatuses['release/once'])).toEqual(new Set([503]));
    for (const target of [
      'records/once',
      'records/exhaust',
      'head/once',
      'write/once',
      'verify/once',
      'complete/once',
      'complete/exhaust',
    ]) {
      for (const status of firstStatuses[target] ?? []) expect([200, 201]).toContain(status);
    }
    // The cell's three cases share one transaction. When every attempt was answered (throttled,
    // conflicting), nothing was written: the request as a whole is unavailable (503) and gives its
    // key back. When an attempt went unanswered (timeout, 5xx) and nothing settled it, it may still
    // land: 200 with TEMPORARY_FAILURE "could not confirm", the key kept; a lost answer is read back (201).
    for (const status of firstStatuses['write/exhaust'] ?? []) expect([200, 201, 503]).toContain(status);

    const items = await scanTable();
    expect(ledgerViolations(items, companyIds)).toEqual([]);
    for (const [n] of cells.entries()) {
      const partner = partners[n % 2]!;
      const byRef = casesByRef(items, partner.companyId);
      for (const i of [0, 1, 2]) {
        const ref = `M-${n}-${i}`;
        expect({ ref, id: byRef.get(ref) }).toEqual({ ref, id: reported.get(`${partner.companyId}|${ref}`) });
        invariantsChecked++;
      }
    }
    const report = await checkStorageInvariants(companyIds);
    expect(report.violations).toEqual([]);
    invariantsChecked += report.checked;
    console.log(`fault matrix: ${cells.length} cells, first answers ${JSON.stringify(firstStatuses)}`);
  });

  // DEFECT (fixed in lib/adapters/dynamodb/case-writer.ts): a transaction that committed but whose answer was
  // lost, and whose retries then failed (throttled), was reported TEMPORARY_FAILURE ("nothing was
  // written") although the case existed; the writer now reads the guard back before giving up.
  it('report a case whose write committed, lost its answer and then ran out of retries as created', async () => {
    const handler = faultyHandler();
    const partner = partners[0]!;
    let writes = 0;
    plan = (call) => (call.target === 'write' ? (writes++ === 0 ? 'lost-response' : 'throttle') : undefined);
    const res = await send(handler, partner, [validCase(files.get(partner.companyId)!, { invoiceRef: 'LOST-THEN-THROTTLED' })]);
    plan = () => undefined;
    // The attempts of the policy, then one settling attempt with the same token (also throttled): then the read-back.
    expect(writes).toBe(WRITER_POLICY.maxAttempts + 1);
    expect(res.statusCode).toBe(201);
    const id = outcome(res).created[0]!.id;
    expect((await readCase(partner.apiKey, id)).statusCode).toBe(200);
  });

  it('say so when storage cannot even confirm whether a case was written, and name it on resubmission', async () => {
    // Outside the ledger's companies: here the first answer cannot know what happened.
    const partner = await newPartner(['cases:read', 'cases:write'], { mode: apiMode });
    const fileKey = await uploadInvoice(partner.apiKey);
    const handler = faultyHandler();
    let writes = 0;
    plan = (call) =>
      call.target === 'write' ? (writes++ === 0 ? 'lost-response' : 'throttle') : call.target === 'verify' ? 'timeout' : undefined;
    const first = outcome(await postCases(partner.apiKey, { cases: [validCase(fileKey, { invoiceRef: 'UNCONFIRMED' })] }, {}, handler));
    plan = () => undefined;
    expect(first.rejected[0]).toMatchObject({
      code: 'TEMPORARY_FAILURE',
      message: expect.stringMatching(/could not confirm whether this case was written/),
    });
    const again = outcome(await postCases(partner.apiKey, { cases: [validCase(fileKey, { invoiceRef: 'UNCONFIRMED' })] }, {}, handler));
    expect(again.rejected[0]).toMatchObject({ code: 'DUPLICATE', existingCaseId: expect.stringMatching(/^case_/) });
    expect((await readCase(partner.apiKey, again.rejected[0]!.existingCaseId!)).statusCode).toBe(200);
    expect((await checkStorageInvariants(new Set([partner.companyId]))).violations).toEqual([]);
  });

  it(`lose nothing and create nothing twice under seeded random faults (${ROUNDS} batches, seed ${SEED})`, async () => {
    const handler = faultyHandler();
    const random = seededRandom(SEED);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;

    // invoiceRef -> the one case id ever reported for it, per company.
    const reported = new Map<string, string>();
    const usedKeys: string[] = [];
    const statuses: Record<number, number> = {};
    let contradictions = 0;
    const remember = (companyId: string, ref: unknown, id: unknown) => {
      const k = `${companyId}|${String(ref)}`;
      const earlier = reported.get(k);
      if (earlier !== undefined && earlier !== id) contradictions++;
      if (typeof id === 'string') reported.set(k, id);
    };

    for (let round = 0; round < ROUNDS; round++) {
      const partner = pick(partners);
      const size = 1 + Math.floor(random() * 12);
      const cases = Array.from({ length: size }, () =>
        validCase(files.get(partner.companyId)!, { invoiceRef: `FAULT-${Math.floor(random() * 30)}` }),
      );
      const roll = random();
      const key = roll < 0.3 ? undefined : roll < 0.8 || usedKeys.length === 0 ? `fault-${SEED}-${round}` : pick(usedKeys);
      if (key) usedKeys.push(key);
      // A client that resends the same request (same key) after a 500, at most twice.
      for (let attempt = 0; attempt < 3; attempt++) {
        const occurrences = new Map<string, number>();
        plan = (call) => {
          const id = `${call.target}:${call.id}`;
          const n = occurrences.get(id) ?? 0;
          occurrences.set(id, n + 1);
          const u = unit(`${SEED}:${round}:${attempt}:${id}:${n}`);
          return u < FAULT_RATE ? FAULTS[Math.floor((u / FAULT_RATE) * FAULTS.length)] : undefined;
        };
        const res = await send(handler, partner, cases, key);
        statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
        if (res.statusCode === 500 || res.statusCode === 503) continue;
        const body =
          res.statusCode === 409
            ? { created: (res.body.created ?? []) as CreatedItem[], rejected: (res.body.rejected ?? []) as RejectedItem[] }
            : outcome(res);
        for (const item of body.created) remember(partner.companyId, item.invoiceRef, item.id);
        for (const item of body.rejected) if (item.code === 'DUPLICATE') remember(partner.companyId, item.invoiceRef, item.existingCaseId);
        break;
      }
    }
    plan = () => undefined;
    expect(contradictions).toBe(0);

    // Every case ever reported (created, or named as the existing one) exists and is readable.
    for (const [k, id] of reported) {
      const partner = partners.find((p) => k.startsWith(p.companyId))!;
      expect((await readCase(partner.apiKey, id)).statusCode).toBe(200);
      invariantsChecked++;
    }
    const midway = await checkStorageInvariants(companyIds);
    expect(midway.violations).toEqual([]);
    invariantsChecked += midway.checked;

    // Resubmitting everything without faults creates each missing case exactly once.
    for (const partner of partners) {
      const all = Array.from({ length: 30 }, (_, n) => validCase(files.get(partner.companyId)!, { invoiceRef: `FAULT-${n}` }));
      const { created, rejected } = outcome(await send(handler, partner, all));
      expect(rejected.every((r) => r.code === 'DUPLICATE')).toBe(true);
      for (const r of rejected) {
        const earlier = reported.get(`${partner.companyId}|${r.invoiceRef}`);
        if (earlier) expect(r.existingCaseId).toBe(earlier);
      }
      expect(created.length + rejected.length).toBe(30);
    }
    const items = await scanTable();
    expect(ledgerViolations(items, companyIds)).toEqual([]);
    for (const partner of partners) {
      const byRef = casesByRef(items, partner.companyId);
      for (let n = 0; n < 30; n++) expect(byRef.has(`FAULT-${n}`)).toBe(true);
    }
    const final = await checkStorageInvariants(companyIds);
    expect(final.violations).toEqual([]);
    invariantsChecked += final.checked;
    console.log(`seeded faults: ${ROUNDS} batches, answers ${JSON.stringify(statuses)}`);
  });
});
