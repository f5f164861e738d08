import type { APIGatewayProxyResult } from 'aws-lambda';
import type { AppConfig } from '../../../lib/runtime/config.js';
import {
  benchCases,
  createCasesEvent,
  createUploadEvent,
  getCaseEvent,
  lambdaContext,
  recordPaymentEvent,
  withdrawCaseEvent,
  type Handler,
} from './events.js';
import { BenchFixtures, recordedHandlers, type BenchPartner, type RecordedHandlers, type RequestHandlerLike } from './handlers.js';
import type { DepthSummary } from './recorder.js';
import { MAX_PAYMENTS_PER_CASE } from '../../../lib/cases/case-record.js';

/**
 * The requests the benchmark and the round-trip-depth test measure, run against one storage
 * backend: the local stack (DynamoDB Local + s3rver) or the store stand-in (memory-backend.ts, in
 * this thread or, for the bench, on a worker thread: bench/lib/remote-backend.ts). A rig holds a
 * company with a key and 100 uploaded invoices, one existing case to read and one existing batch
 * of 100 cases to resubmit as duplicates.
 */
export type ScenarioId =
  'get' | 'create-1' | 'create-100' | 'create-100-key' | 'create-100-dup' | 'withdraw' | 'payment' | 'payment-key' | 'get-100-payments';

export interface Scenario {
  id: ScenarioId;
  label: string;
  /** The target for the critical-path depth. */
  depthTarget: number;
  /** What the design reaches (docs/design.md). */
  designDepth: number;
  handler: keyof Pick<RecordedHandlers, 'getCase' | 'createCases' | 'withdrawCase' | 'recordPayment'>;
  /** Unrecorded set-up of one run (a case to withdraw): its answer is handed to `event`. */
  prepare?(rig: Rig, tag: string): Promise<string>;
  event(rig: Rig, tag: string, prepared?: string): ReturnType<typeof getCaseEvent>;
  check(result: APIGatewayProxyResult): void;
}

export interface Rig {
  name: string;
  handlers: RecordedHandlers;
  fixtures: BenchFixtures;
  partner: BenchPartner;
  seedCaseId: string;
  duplicateCases: Record<string, unknown>[];
  backend?: { busyMs: number };
  sequence: number;
  /** A case holding the most payments a case may hold, made on first use (get-100-payments). */
  paidCaseId?: string;
}

/**
 * A new case of the rig's company, made without recording (a payment needs an open case with room).
 * On the local stack its debtor is verified by the stream's verifier, which changes the case: waited
 * for (up to VERIFIED_WITHIN_MS), so that change never lands between a measured payment's (or
 * withdraw's) read and its transaction, where it is a lost race the payment reads and decides again (two more round
 * trips: a CI run once measured depth 5 for 3). The stand-in backend has no stream and no verifier.
 */
async function newCase(rig: Rig, tag: string): Promise<string> {
  const created = await rig.handlers.createCases(
    createCasesEvent(rig.partner.apiKey, benchCases(tag, 1, rig.partner.fileKeys)),
    lambdaContext(),
  );
  expectBatch(created, 201, 1, 0);
  const caseId = (JSON.parse(created.body) as { created: { id: string }[] }).created[0]!.id;
  if (rig.backend === undefined) {
    for (const until = Date.now() + VERIFIED_WITHIN_MS; Date.now() < until; await new Promise((r) => setTimeout(r, 50))) {
      const read = await rig.handlers.getCase(getCaseEvent(rig.partner.apiKey, caseId), lambdaContext());
      const status = (JSON.parse(read.body) as { debtorVerification?: { status?: string } }).debtorVerification?.status;
      if (read.statusCode === 200 && status !== 'PENDING') break;
    }
  }
  return caseId;
}
const VERIFIED_WITHIN_MS = 10_000;

function expectPayment(r: APIGatewayProxyResult): void {
  if (r.statusCode !== 201) throw new Error(`unexpected payment response ${r.statusCode}: ${r.body.slice(0, 300)}`);
}

function expectBatch(result: APIGatewayProxyResult, status: number, created: number, duplicates: number): void {
  const body = JSON.parse(result.body) as { created?: unknown[]; rejected?: { code: string }[] };
  const dups = (body.rejected ?? []).filter((r) => r.code === 'DUPLICATE').length;
  if (
    result.statusCode !== status ||
    body.created?.length !== created ||
    dups !== duplicates ||
    (body.rejected?.length ?? 0) !== duplicates
  ) {
    throw new Error(`unexpected response ${result.statusCode}: ${result.body.slice(0, 400)}`);
  }
}

export const SCENARIOS: readonly Scenario[] = [
  {
    id: 'get',
    label: 'GET /cases/{id}',
    depthTarget: 2,
    designDepth: 1,
    handler: 'getCase',
    event: (rig) => getCaseEvent(rig.partner.apiKey, rig.seedCaseId),
    check: (r) => {
      if (r.statusCode !== 200) throw new Error(`unexpected GET response ${r.statusCode}: ${r.body.slice(0, 300)}`);
    },
  },
  {
    id: 'create-1',
    label: 'POST /cases, 1 case',
    depthTarget: 4,
    designDepth: 3,
    handler: 'createCases',
    event: (rig, tag) => createCasesEvent(rig.partner.apiKey, benchCases(tag, 1, rig.partner.fileKeys)),
    check: (r) => expectBatch(r, 201, 1, 0),
  },
  {
    id: 'create-100',
    label: 'POST /cases, 100 cases',
    depthTarget: 4,
    designDepth: 3,
    handler: 'createCases',
    event: (rig, tag) => createCasesEvent(rig.partner.apiKey, benchCases(tag, 100, rig.partner.fileKeys)),
    check: (r) => expectBatch(r, 201, 100, 0),
  },
  {
    id: 'create-100-key',
    label: 'POST /cases, 100 + Idempotency-Key',
    depthTarget: 5,
    designDepth: 4,
    handler: 'createCases',
    event: (rig, tag) => createCasesEvent(rig.partner.apiKey, benchCases(tag, 100, rig.partner.fileKeys), `key-${tag}`),
    check: (r) => expectBatch(r, 201, 100, 0),
  },
  {
    id: 'create-100-dup',
    label: 'POST /cases, 100 duplicates',
    depthTarget: 4,
    designDepth: 3,
    handler: 'createCases',
    event: (rig) => createCasesEvent(rig.partner.apiKey, rig.duplicateCases),
    check: (r) => expectBatch(r, 200, 0, 100),
  },
  {
    id: 'withdraw',
    label: 'POST /cases/{id}/withdraw',
    // Issue 23: at most 2 round trips after the key. Design: the case read beside the key, then the one transaction.
    depthTarget: 3,
    designDepth: 2,
    handler: 'withdrawCase',
    // Its verification waited for, as a payment's: the verifier's change of the case landing between the withdraw's
    // read and its transaction made the withdraw read and decide again (a CI run measured four steps for two).
    prepare: (rig, tag) => newCase(rig, `${tag}-W`),
    event: (rig, _tag, caseId) => withdrawCaseEvent(rig.partner.apiKey, caseId!, 'sent in error'),
    check: (r) => {
      if (r.statusCode !== 200 || (JSON.parse(r.body) as { status?: string }).status !== 'WITHDRAWN')
        throw new Error(`unexpected withdraw response ${r.statusCode}: ${r.body.slice(0, 300)}`);
    },
  },
  {
    id: 'payment',
    label: 'POST /cases/{id}/payments',
    // Issue 33: depth ≤ 2 in all. Design: the case read beside the key, then the one transaction.
    depthTarget: 2,
    designDepth: 2,
    handler: 'recordPayment',
    prepare: (rig, tag) => newCase(rig, `${tag}-P`),
    event: (rig, _tag, caseId) => recordPaymentEvent(rig.partner.apiKey, caseId!, 1),
    check: expectPayment,
  },
  {
    id: 'payment-key',
    label: 'POST /cases/{id}/payments + Idempotency-Key',
    // The claim beside the case's read (which started beside the key), then the one transaction that also completes the claim.
    depthTarget: 3,
    designDepth: 3,
    handler: 'recordPayment',
    prepare: (rig, tag) => newCase(rig, `${tag}-PK`),
    event: (rig, tag, caseId) => recordPaymentEvent(rig.partner.apiKey, caseId!, 1, `pay-${tag}`),
    check: expectPayment,
  },
  {
    id: 'get-100-payments',
    label: 'GET /cases/{id} with amounts (100 payments)',
    // Issue 33: depth 1. The amounts come from the payment facts on the case item: the key and the case, in parallel.
    depthTarget: 1,
    designDepth: 1,
    handler: 'getCase',
    prepare: async (rig, tag) => {
      if (rig.paidCaseId) return rig.paidCaseId;
      const caseId = await newCase(rig, `${tag}-100P`);
      for (let i = 0; i < MAX_PAYMENTS_PER_CASE; i++) {
        expectPayment(await rig.handlers.recordPayment(recordPaymentEvent(rig.partner.apiKey, caseId, 0.01), lambdaContext()));
      }
      rig.paidCaseId = caseId;
      return caseId;
    },
    event: (rig, _tag, caseId) => getCaseEvent(rig.partner.apiKey, caseId!),
    check: (r) => {
      const body = JSON.parse(r.body) as { amounts?: { paid?: string } };
      if (r.statusCode !== 200 || body.amounts?.paid !== '1.00')
        throw new Error(`unexpected GET response ${r.statusCode}: ${r.body.slice(0, 300)}`);
    },
  },
];

export async function makeRig(name: string, cfg: AppConfig, backend?: RequestHandlerLike & { busyMs: number }): Promise<Rig> {
  const fixtures = new BenchFixtures(cfg, backend);
  const partner = await fixtures.partner(100);
  const handlers = recordedHandlers(cfg, backend);
  const stamp = `${name}-${Date.now().toString(36)}`;
  const seed = await handlers.createCases(
    createCasesEvent(partner.apiKey, benchCases(`${stamp}-SEED`, 1, partner.fileKeys)),
    lambdaContext(),
  );
  expectBatch(seed, 201, 1, 0);
  const seedCaseId = (JSON.parse(seed.body) as { created: { id: string }[] }).created[0]!.id;
  const duplicateCases = benchCases(`${stamp}-DUP`, 100, partner.fileKeys);
  expectBatch(await handlers.createCases(createCasesEvent(partner.apiKey, duplicateCases), lambdaContext()), 201, 100, 0);
  return { name, handlers, fixtures, partner, seedCaseId, duplicateCases, ...(backend ? { backend } : {}), sequence: 0 };
}

export function closeRig(rig: Rig): void {
  rig.fixtures.destroy();
  rig.handlers.ddb.destroy();
  rig.handlers.s3.destroy();
}

export interface Measurement extends DepthSummary {
  ms: number;
  /**
   * Time this thread was busy during the request (event-loop utilisation: running JavaScript,
   * GC and native work, not waiting on I/O): the handler's CPU when the stand-in runs on a thread
   * of its own (bench/lib/remote-backend.ts); with the in-process stand-in it includes its serving.
   */
  activeMs: number;
  /** Time the store stand-in spent serving this request's calls (0 on the local stack). */
  storeMs: number;
}

export interface MeasureOptions {
  /** Record the key's use just before (default): no lastUsedAt write in the request. */
  warmKey?: boolean;
  delayMs?: number;
}

/** Runs one request of the scenario with the recorder on; checks the response. */
export async function measure(rig: Rig, scenario: Scenario, options: MeasureOptions = {}): Promise<Measurement> {
  const tag = `${rig.name}-${scenario.id}-${++rig.sequence}`;
  // Before the key is warmed or cooled: the set-up's own requests use the key too.
  const prepared = await scenario.prepare?.(rig, tag);
  if (options.warmKey ?? true) await rig.fixtures.warmKey(rig.partner.keyId);
  else await rig.fixtures.coolKey(rig.partner.keyId);
  const event = scenario.event(rig, tag, prepared);
  const handler: Handler = rig.handlers[scenario.handler];
  rig.handlers.recorder.delayMs = options.delayMs ?? 0;
  rig.handlers.recorder.reset();
  const busyBefore = rig.backend?.busyMs ?? 0;
  const started = performance.now();
  const loopBefore = performance.eventLoopUtilization();
  const result = await handler(event, lambdaContext());
  const activeMs = performance.eventLoopUtilization(loopBefore).active;
  const ms = performance.now() - started;
  const storeMs = (rig.backend?.busyMs ?? 0) - busyBefore;
  rig.handlers.recorder.delayMs = 0;
  scenario.check(result);
  return { ...rig.handlers.recorder.summary(), ms, activeMs, storeMs };
}

/** POST /uploads once: presigning is local, so only the key lookup should be a storage call. */
export async function measureUpload(rig: Rig): Promise<DepthSummary> {
  await rig.fixtures.warmKey(rig.partner.keyId);
  rig.handlers.recorder.reset();
  const result = await rig.handlers.createUpload(createUploadEvent(rig.partner.apiKey), lambdaContext());
  if (result.statusCode !== 201) throw new Error(`unexpected upload response ${result.statusCode}: ${result.body.slice(0, 300)}`);
  return rig.handlers.recorder.summary();
}
