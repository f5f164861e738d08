import type { Caller } from '../auth/authenticate-key.js';
import type { Deadline } from '../deadline.js';
import { ServiceUnavailableError } from '../errors.js';
import type { Log } from '../log.js';
import { SIMULATE_TEMPORARY_FAILURE_PREFIX, type Mode } from '../mode.js';
import type { BatchResult, CreatedItem, RejectedItem } from './batch-result.js';
import { checkCase, echoInvoiceRef, firstCode, type Finding, type RejectionCode, type ValidCase } from './case-input.js';
import { buildCaseEvent } from './case-lifecycle.js';
import { awaitsReferenceRate, newCaseId, newCaseLifecycle, toCaseView, type RecoveryGate, type StoredCase } from './case-record.js';
import { formatReference } from './case-reference.js';
import { keyReusedError } from './idempotency-replay.js';
import { requestFingerprint } from './request-fingerprint.js';
import type { CompanyRecord } from '../accounts/ports.js';
import type {
  CaseWriter,
  ClaimResult,
  CompanySettings,
  IdempotencyStore,
  InvoiceFiles,
  NewCase,
  ReferenceAllocator,
  StoredBatchResponse,
  WriteOutcome,
} from './ports.js';

/**
 * Batch case creation (spec 4.2, product rules). Storage work runs in four sequential phases,
 * whatever the batch size:
 *   1. the API key lookup (done by the auth middleware before this runs);
 *   2. in parallel: the Idempotency-Key claim, the company's settings, the batch's references
 *      (a counter update only when the process's block runs out), and the upload records of the
 *      cited invoice files in one read, then a HEAD only for a file without a record;
 *   3. the cases' writes, handed to the writer together (it packs them into as few transactions
 *      as it can, guard + case + audit record + `case.created` event of each all or none, sent in
 *      parallel);
 *   4. completing the Idempotency-Key claim with the response.
 * Every input element ends in exactly one of `created` / `rejected`.
 */
export interface CreateCasesDeps {
  companies: CompanySettings;
  writer: CaseWriter;
  idempotency: IdempotencyStore;
  references: ReferenceAllocator;
  files: InvoiceFiles;
  log: Log;
  /** Rule 6 for the calling company and mode: a message when the key is not one we issued to it. */
  fileKeyProblem: (fileKey: string, companyId: string, mode: Mode) => string | undefined;
  now: () => Date;
  idempotencyTtlSeconds: number;
  /**
   * How long an Idempotency-Key may stay IN_PROGRESS before another request may take it over: the
   * function's timeout plus a margin, so a claim never outlives the request that holds it by more.
   */
  claimHorizonSeconds: number;
  newCaseId?: () => string;
}

export interface CreateCasesRequest {
  caller: Caller;
  requestId: string;
  sourceIp: string;
  userAgent?: string;
  idempotencyKey?: string;
  cases: unknown[];
  /** The request's deadline: every storage call gives up by then; clean-up uses its reserve. */
  deadline: Deadline;
}

interface Slot {
  index: number;
  invoiceRef: string | null;
  value?: ValidCase;
  findings: Finding[];
  /** Index of the earlier element of this request holding the same invoiceRef. */
  duplicateOf?: number;
  newCase?: NewCase;
  outcome?: WriteOutcome;
  /** Rejected TEMPORARY_FAILURE by test mode's rehearsal (SIMULATE-TEMPORARY-FAILURE), not by storage. */
  simulated?: true;
}

/** What phase 2 gathers in parallel: each settled, so a failure can still give the key back. */
interface Gathered {
  claim: PromiseSettledResult<ClaimResult>;
  company: PromiseSettledResult<CompanyRecord | undefined>;
  firstSequence: PromiseSettledResult<number>;
  files: PromiseSettledResult<FileStates>;
}

/** The storage work the checked batch needs: the files rule 7 must look at, and how many references. */
interface Needs {
  /** Slots that passed every pure rule except possibly OUT_OF_JURISDICTION (which comes after rule 7). */
  fileSlots: Slot[];
  fileKeys: string[];
  references: number;
}

export class CreateCasesService {
  constructor(private readonly deps: CreateCasesDeps) {}

  async create(request: CreateCasesRequest): Promise<BatchResult> {
    const now = this.deps.now();
    const slots = this.checkRules(request, now);
    const needs = storageNeeds(slots);
    const requestHash = request.idempotencyKey ? requestFingerprint(request.cases) : '';
    const gathered = await this.gather(request, needs, now, requestHash);
    await this.takeKey(request, gathered.claim, now, requestHash);

    // Until a write may have landed, any failure gives the key back (the request had no effect).
    let mayHaveWritten = false;
    try {
      const { company, firstSequence, files } = settled(gathered);
      checkFiles(needs.fileSlots, new Map(files));
      const toWrite = this.buildCases(slots, request, now, firstSequence, company);
      mayHaveWritten = toWrite.length > 0;
      await this.writeCases(toWrite, request.deadline);
      // Every write answered without effect: the request as a whole had none; it is unavailable (503).
      mayHaveWritten = toWrite.some((slot) => !(slot.outcome?.kind === 'failed' && !slot.outcome.outcomeUnknown));
      if (toWrite.length > 0 && !mayHaveWritten) throw new ServiceUnavailableError();
    } catch (error) {
      if (request.idempotencyKey && !mayHaveWritten) await this.releaseKey(request);
      throw error;
    }

    const result = assemble(slots);
    if (request.idempotencyKey) await this.completeKey(request, result);
    return result;
  }

  /** Rules 1–6 and 8 for every element: pure, no storage. */
  private checkRules(request: CreateCasesRequest, now: Date): Slot[] {
    const { companyId, mode } = request.caller;
    return request.cases.map((raw, index) => {
      const check = checkCase(raw, { now, fileKeyProblem: (key) => this.deps.fileKeyProblem(key, companyId, mode) });
      // Test mode only: rehearsing the resubmission path. Nothing is written for such a case.
      const simulated =
        mode === 'test' && check.value?.invoiceRef.startsWith(SIMULATE_TEMPORARY_FAILURE_PREFIX) === true && check.findings.length === 0;
      if (simulated) {
        check.findings.push({
          code: 'TEMPORARY_FAILURE',
          field: 'invoiceRef',
          message:
            `simulated in test mode (invoiceRef starts with ${SIMULATE_TEMPORARY_FAILURE_PREFIX}); ` +
            'nothing was written for this case and resubmitting it is safe',
        });
      }
      return {
        index,
        invoiceRef: echoInvoiceRef(raw),
        findings: check.findings,
        ...(check.value ? { value: check.value } : {}),
        ...(simulated ? { simulated: true as const } : {}),
      };
    });
  }

  /**
   * Phase 2, in parallel: the Idempotency-Key claim, the company's settings, the batch's
   * references, and the cited files' upload records (a HEAD only for a file without one).
   */
  private async gather(request: CreateCasesRequest, needs: Needs, now: Date, requestHash: string): Promise<Gathered> {
    const { deps } = this;
    const { companyId, mode } = request.caller;
    const { deadline } = request;
    const claim: Promise<ClaimResult> = request.idempotencyKey
      ? deps.idempotency.claim(
          {
            mode,
            companyId,
            idempotencyKey: request.idempotencyKey,
            requestId: request.requestId,
            now,
            ttlSeconds: deps.idempotencyTtlSeconds,
            staleAfterSeconds: deps.claimHorizonSeconds,
            requestHash,
          },
          deadline,
        )
      : Promise.resolve({ claimed: true });
    const company = needs.references > 0 ? deps.companies.get(companyId, deadline) : Promise.resolve(undefined);
    const firstSequence = needs.references > 0 ? deps.references.reserve(needs.references, deadline) : Promise.resolve(0);
    const [c, co, fs, f] = await Promise.allSettled([claim, company, firstSequence, fileStates(deps, needs.fileKeys, deadline)]);
    return { claim: c, company: co, firstSequence: fs, files: f };
  }

  /** The Idempotency-Key is this request's to use, or the request ends here (a replay, or the claim failed). */
  private async takeKey(
    request: CreateCasesRequest,
    claim: PromiseSettledResult<ClaimResult>,
    now: Date,
    requestHash: string,
  ): Promise<void> {
    if (claim.status === 'rejected') {
      // The put may have been applied even though its answer was lost: give the key back (the
      // release only deletes a claim holding this request's id) so a retry is not refused.
      if (request.idempotencyKey) await this.releaseKey(request);
      throw claim.reason;
    }
    if (claim.value.claimed) return;
    throw keyReusedError(claim.value, requestHash, now, this.deps.claimHorizonSeconds);
  }

  /** In-request duplicates (the first valid occurrence wins) and the new cases to write, references in order. */
  private buildCases(
    slots: Slot[],
    request: CreateCasesRequest,
    now: Date,
    firstSequence: number,
    company: CompanyRecord | undefined,
  ): Slot[] {
    const { companyId, mode } = request.caller;
    const gate: RecoveryGate = company?.autoAttestation === true ? 'AUTO_ATTESTED' : 'AWAITING_CONFIRMATION';
    const winners = new Map<string, Slot>();
    let sequence = firstSequence;
    const at = now.toISOString();
    const newCaseIdOf = this.deps.newCaseId ?? newCaseId;
    for (const slot of slots) {
      if (!slot.value || slot.findings.length > 0) continue;
      const earlier = winners.get(slot.value.invoiceRefKey);
      if (earlier) {
        slot.duplicateOf = earlier.index;
        continue;
      }
      winners.set(slot.value.invoiceRefKey, slot);
      slot.newCase = buildNewCase(slot.value, {
        caseId: newCaseIdOf(),
        companyId,
        mode,
        reference: formatReference(sequence++),
        gate,
        at,
        keyId: request.caller.keyId,
        requestId: request.requestId,
        sourceIp: request.sourceIp,
        ...(request.userAgent ? { userAgent: request.userAgent } : {}),
      });
    }
    return slots.filter((s) => s.newCase);
  }

  /** Phase 3: the cases' writes, handed to the writer together; each slot gets its outcome. */
  private async writeCases(toWrite: Slot[], deadline: Deadline): Promise<void> {
    if (toWrite.length === 0) return;
    const outcomes = await this.deps.writer.writeAll(
      toWrite.map((slot) => slot.newCase!),
      deadline,
    );
    toWrite.forEach((slot, i) => (slot.outcome = outcomes[i]));
  }

  /**
   * Gives the key back after the request failed as a whole before any case could have been
   * written (also when the claim's own answer was lost: the put may have landed). Clean-up: it may
   * use the time kept back from the deadline. Only a claim held by this request and still
   * IN_PROGRESS is deleted.
   */
  private async releaseKey(request: CreateCasesRequest): Promise<void> {
    const { companyId, mode } = request.caller;
    try {
      await this.deps.idempotency.release(mode, companyId, request.idempotencyKey!, request.requestId, request.deadline.forCleanUp());
    } catch (error) {
      // The claim stays IN_PROGRESS until its horizon passes (the function timeout plus a margin);
      // a retry meanwhile gets 409 with Retry-After, and creates nothing.
      this.deps.log.error('could not release idempotency claim', { error: error as Error, idempotencyKeyReleased: false });
    }
  }

  /** Phase 4: the answer stored on the key, so a retry with it replays this answer. */
  private async completeKey(request: CreateCasesRequest, result: BatchResult): Promise<void> {
    const { companyId, mode } = request.caller;
    const response: StoredBatchResponse = { created: result.created, rejected: result.rejected };
    try {
      const { idempotencyKey, requestId, deadline } = request;
      await this.deps.idempotency.complete(mode, companyId, idempotencyKey!, requestId, response, this.deps.now(), deadline.forCleanUp());
    } catch (error) {
      // The cases are written and the partner gets the result now. The claim stays IN_PROGRESS
      // until its horizon passes: a retry with this key meanwhile gets 409 and creates nothing, and
      // afterwards the invoiceRef guard answers DUPLICATE for each of these cases.
      this.deps.log.error('could not complete idempotency claim', { error: error as Error });
    }
  }
}

/** Rule 7 matters only where no earlier rule failed (OUT_OF_JURISDICTION comes after it); references only for the valid. */
function storageNeeds(slots: Slot[]): Needs {
  const fileSlots = slots.filter((s) => s.value && s.findings.every((f) => f.code === 'OUT_OF_JURISDICTION'));
  const valid = slots.filter((s) => s.value && s.findings.length === 0);
  return {
    fileSlots,
    fileKeys: [...new Set(fileSlots.map((s) => s.value!.invoiceFileKey))],
    references: new Set(valid.map((s) => s.value!.invoiceRefKey)).size,
  };
}

/** Phase 2's other results, or the first failure among them (the request fails as a whole). */
function settled(gathered: Gathered): { company: CompanyRecord | undefined; firstSequence: number; files: FileStates } {
  const { company, firstSequence, files } = gathered;
  if (company.status === 'rejected') throw company.reason;
  if (firstSequence.status === 'rejected') throw firstSequence.reason;
  if (files.status === 'rejected') throw files.reason;
  return { company: company.value, firstSequence: firstSequence.value, files: files.value };
}

const FILE_NOT_UPLOADED_MESSAGE = 'no file has been uploaded under this invoiceFileKey; PUT the file to the uploadUrl first';
const FILE_UNCHECKED_MESSAGE = 'the invoice file could not be checked; nothing was written for this case and resubmitting it is safe';

/** Rule 7's findings from the files' states. */
function checkFiles(fileSlots: Slot[], fileState: ReadonlyMap<string, FileState>): void {
  for (const slot of fileSlots) {
    const state = fileState.get(slot.value!.invoiceFileKey);
    if (state === 'absent') {
      slot.findings.push({ code: 'FILE_NOT_UPLOADED', field: 'invoiceFileKey', message: FILE_NOT_UPLOADED_MESSAGE });
    } else if (state === 'error') {
      slot.findings.push({ code: 'TEMPORARY_FAILURE', field: 'invoiceFileKey', message: FILE_UNCHECKED_MESSAGE });
    }
  }
}

type FileState = 'present' | 'absent' | 'error';
type FileStates = (readonly [string, FileState])[];

/**
 * Rule 7 for the distinct cited files: the upload records first, in one read; then the object
 * store only for the files without a record (uploaded a moment ago, its report still on the way).
 * When the records cannot be read, every file is asked of the object store instead.
 */
async function fileStates(deps: CreateCasesDeps, fileKeys: readonly string[], deadline: Deadline): Promise<FileStates> {
  if (fileKeys.length === 0) return [];
  let recorded: ReadonlySet<string> = new Set();
  try {
    recorded = await deps.files.recorded(fileKeys, deadline);
  } catch (error) {
    deps.log.warn('upload records could not be read; asking the object store', { error: error as Error });
  }
  return Promise.all(
    fileKeys.map(async (key): Promise<readonly [string, FileState]> => {
      if (recorded.has(key)) return [key, 'present'];
      try {
        return [key, (await deps.files.exists(key, deadline)) ? 'present' : 'absent'];
      } catch (error) {
        deps.log.warn('invoice file check failed', { error: error as Error });
        return [key, 'error'];
      }
    }),
  );
}

interface BuildContext {
  caseId: string;
  companyId: string;
  mode: Mode;
  reference: string;
  gate: RecoveryGate;
  at: string;
  keyId: string;
  requestId: string;
  sourceIp: string;
  userAgent?: string;
}

/**
 * The checked input spread last, after what creation adds: V8 copies a spread that opens an
 * object literal quickly but falls back to a slow path for every property written after it (over
 * a microsecond each on Node 20; this was 10 % of a 100-case create). The names cannot collide:
 * case-record.ts does not compile while ValidCase has any of creation's fields.
 */
function buildNewCase(value: ValidCase, ctx: BuildContext): NewCase {
  const { attestation, ...checked } = value;
  // Spec rule 1: every case begins DRAFT; its gates move it on afterwards (lib/cases/case-lifecycle.ts).
  const lifecycle = newCaseLifecycle(checked.debtorCompanyNo !== undefined, ctx.at);
  const stored: StoredCase = {
    caseId: ctx.caseId,
    companyId: ctx.companyId,
    reference: ctx.reference,
    status: lifecycle.status,
    recoveryGate: ctx.gate,
    currency: 'GBP',
    createdAt: ctx.at,
    updatedAt: ctx.at,
    createdByKeyId: ctx.keyId,
    requestId: ctx.requestId,
    mode: ctx.mode,
    debtorVerification: lifecycle.debtorVerification,
    statusHistory: lifecycle.statusHistory,
    ...checked,
  };
  return {
    stored,
    audit: {
      caseId: ctx.caseId,
      companyId: ctx.companyId,
      mode: ctx.mode,
      attestedAt: ctx.at,
      keyId: ctx.keyId,
      requestId: ctx.requestId,
      sourceIp: ctx.sourceIp,
      ...attestation,
      ...(ctx.userAgent ? { userAgent: ctx.userAgent } : {}),
    },
    // The outbox: announced in the transaction that creates it, carrying the record GET will return.
    event: buildCaseEvent(toCaseView(stored, { now: new Date(ctx.at) }), ctx.at),
  };
}

const TEMPORARY_MESSAGE = 'storage was temporarily unavailable; nothing was written for this case and resubmitting it is safe';
/** When storage could not even confirm afterwards whether the case's write went through. */
const UNCONFIRMED_MESSAGE =
  'storage was temporarily unavailable and could not confirm whether this case was written; resubmitting it is safe: if it was written, the resubmission is rejected as DUPLICATE naming it';

function outcomeUnknown(outcome: WriteOutcome | undefined): boolean {
  return outcome?.kind === 'failed' && outcome.outcomeUnknown === true;
}

function temporaryMessage(outcome: WriteOutcome | undefined): string {
  return outcomeUnknown(outcome) ? UNCONFIRMED_MESSAGE : TEMPORARY_MESSAGE;
}

function rejection(slot: Slot, code: RejectionCode, message: string, extra: Partial<RejectedItem> = {}): RejectedItem {
  const errors =
    slot.findings.length > 0
      ? slot.findings.map(({ field, message: m }) => ({ field, message: m }))
      : [{ field: code === 'DUPLICATE' ? 'invoiceRef' : '', message }];
  return { index: slot.index, invoiceRef: slot.invoiceRef, code, message, errors, ...extra };
}

function duplicateMessage(reference: string): string {
  return `invoiceRef is already being chased in case ${reference}`;
}

/** An element whose write (its own, or the one it repeats) created no case: DUPLICATE of the existing one, or TEMPORARY_FAILURE. */
function notCreated(slot: Slot, outcome: Slot['outcome']): RejectedItem {
  if (outcome?.kind === 'duplicate')
    return rejection(slot, 'DUPLICATE', duplicateMessage(outcome.existingReference), {
      existingCaseId: outcome.existingCaseId,
      existingReference: outcome.existingReference,
    });
  return rejection(slot, 'TEMPORARY_FAILURE', temporaryMessage(outcome));
}

function assemble(slots: Slot[]): BatchResult {
  const created: CreatedItem[] = [];
  const rejected: RejectedItem[] = [];
  let writeOutcomeUnknown = 0;
  let referenceRateMissing = 0;
  let simulatedFailures = 0;
  for (const slot of slots) {
    const code = firstCode(slot.findings);
    if (code) {
      const first = slot.findings.find((f) => f.code === code)!;
      rejected.push(rejection(slot, code, first.message));
      if (slot.simulated) simulatedFailures++;
      continue;
    }
    if (slot.duplicateOf !== undefined) {
      const winner = slots[slot.duplicateOf]!;
      const outcome = winner.outcome;
      if (outcome?.kind === 'created') {
        const reference = winner.newCase!.stored.reference;
        rejected.push(
          rejection(slot, 'DUPLICATE', `${duplicateMessage(reference)} (created from element ${winner.index} of this request)`, {
            existingCaseId: winner.newCase!.stored.caseId,
            existingReference: reference,
          }),
        );
      } else {
        rejected.push(notCreated(slot, outcome));
        if (outcomeUnknown(outcome)) writeOutcomeUnknown++;
      }
      continue;
    }
    const outcome = slot.outcome;
    if (outcome?.kind === 'created') {
      const stored = slot.newCase!.stored;
      created.push({
        index: slot.index,
        invoiceRef: stored.invoiceRef,
        id: stored.caseId,
        reference: stored.reference,
        livemode: stored.mode === 'live',
      });
      // The case.created event carries the case as created, amounts included.
      if (awaitsReferenceRate(slot.newCase!.event.data.object)) referenceRateMissing++;
    } else {
      rejected.push(notCreated(slot, outcome));
      if (outcomeUnknown(outcome)) writeOutcomeUnknown++;
    }
  }
  return { created, rejected, writeOutcomeUnknown, referenceRateMissing, simulatedFailures };
}

/** Counts by outcome for the request log line and metrics. */
export function outcomeCounts(result: BatchResult): Record<string, number> {
  const counts: Record<string, number> = {
    created: result.created.length,
    rejected: result.rejected.length,
    writeOutcomeUnknown: result.writeOutcomeUnknown,
    referenceRateMissing: result.referenceRateMissing,
    simulatedFailures: result.simulatedFailures,
  };
  for (const item of result.rejected) counts[`rejected_${item.code}`] = (counts[`rejected_${item.code}`] ?? 0) + 1;
  return counts;
}
