import type { Caller } from '../auth/authenticate-key.js';
import type { Deadline } from '../deadline.js';
import { IdempotencyKeyReusedError, ServiceUnavailableError } from '../errors.js';
import type { Log } from '../log.js';
import { SIMULATE_TEMPORARY_FAILURE_PREFIX, type Mode } from '../mode.js';
import type { BatchResult, CreatedItem, RejectedItem } from './batch-result.js';
import { checkCase, echoInvoiceRef, firstCode, type Finding, type RejectionCode, type ValidCase } from './case-input.js';
import { newCaseId, type RecoveryGate, type StoredCase } from './case-record.js';
import { formatReference } from './case-reference.js';
import { requestFingerprint } from './request-fingerprint.js';
import type { CaseWriter, ClaimResult, CompanySettings, IdempotencyStore, InvoiceFiles, NewCase, ReferenceAllocator, StoredBatchResponse, WriteOutcome } from './ports.js';

/**
 * Batch case creation (spec 4.2, product rules). Storage work runs in four sequential phases,
 * whatever the batch size:
 *   1. the API key lookup (done by the auth middleware before this runs);
 *   2. in parallel: the Idempotency-Key claim, the company's settings, the batch's references
 *      (a counter update only when the process's block runs out), and the upload records of the
 *      cited invoice files in one read, then a HEAD only for a file without a record;
 *   3. the cases' writes, handed to the writer together (it packs them into as few transactions
 *      as it can, guard + case + audit record of each all or none, sent in parallel);
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
}


export class CreateCasesService {
  constructor(private readonly deps: CreateCasesDeps) {}

  async create(request: CreateCasesRequest): Promise<BatchResult> {
    const { deps } = this;
    const now = deps.now();
    const companyId = request.caller.companyId;
    const mode = request.caller.mode;

    // Pure rules (1–6 and 8) for every element.
    const slots: Slot[] = request.cases.map((raw, index) => {
      const check = checkCase(raw, { now, fileKeyProblem: (key) => deps.fileKeyProblem(key, companyId, mode) });
      // Test mode only: rehearsing the resubmission path. Nothing is written for such a case.
      if (mode === 'test' && check.value?.invoiceRef.startsWith(SIMULATE_TEMPORARY_FAILURE_PREFIX) && check.findings.length === 0) {
        check.findings.push({ code: 'TEMPORARY_FAILURE', field: 'invoiceRef', message: `simulated in test mode (invoiceRef starts with ${SIMULATE_TEMPORARY_FAILURE_PREFIX}); nothing was written for this case and resubmitting it is safe` });
      }
      return { index, invoiceRef: echoInvoiceRef(raw), findings: check.findings, ...(check.value ? { value: check.value } : {}) };
    });

    // Rule 7 matters only where no earlier rule failed (OUT_OF_JURISDICTION comes after it).
    const needsFile = slots.filter((s) => s.value && s.findings.every((f) => f.code === 'OUT_OF_JURISDICTION'));
    const fileKeys = [...new Set(needsFile.map((s) => s.value!.invoiceFileKey))];
    const pureValid = slots.filter((s) => s.value && s.findings.length === 0);
    const referencesNeeded = new Set(pureValid.map((s) => s.value!.invoiceRefKey)).size;

    // Phase 2.
    const { deadline } = request;
    const requestHash = request.idempotencyKey ? requestFingerprint(request.cases) : '';
    const claimP: Promise<ClaimResult> = request.idempotencyKey
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
    const companyP = referencesNeeded > 0 ? deps.companies.get(companyId, deadline) : Promise.resolve(undefined);
    const firstSequenceP = referencesNeeded > 0 ? deps.references.reserve(referencesNeeded, deadline) : Promise.resolve(0);
    const filesP = checkFiles(deps, fileKeys, deadline);
    const [claim, company, firstSequence, files] = await Promise.allSettled([claimP, companyP, firstSequenceP, filesP]);

    if (claim.status === 'rejected') {
      // The put may have been applied even though its answer was lost: give the key back (the
      // release only deletes a claim holding this request's id) so a retry is not refused.
      if (request.idempotencyKey) await releaseClaim(deps, mode, companyId, request.idempotencyKey, request.requestId, deadline);
      throw claim.reason;
    }
    if (!claim.value.claimed) {
      const replay = claim.value;
      const sameRequest = replay.requestHash === requestHash;
      throw new IdempotencyKeyReusedError(
        replay.state === 'COMPLETED'
          ? {
              state: 'COMPLETED',
              sameRequest,
              original: { created: (replay.response.created as CreatedItem[]).map((item) => orderCreated(item, mode)), rejected: (replay.response.rejected as RejectedItem[]).map(orderRejected) },
            }
          : {
              state: 'IN_PROGRESS',
              sameRequest,
              // The first request answers before its function's timeout; its claim cannot outlive the horizon.
              retryAfterSeconds: Math.max(1, replay.claimedAt + deps.claimHorizonSeconds - Math.floor(now.getTime() / 1000)),
            },
      );
    }

    let writeStarted = false;
    try {
      if (company.status === 'rejected') throw company.reason;
      if (firstSequence.status === 'rejected') throw firstSequence.reason;
      if (files.status === 'rejected') throw files.reason;
      const fileState = new Map(files.value);
      const gate: RecoveryGate = company.value?.autoAttestation === true ? 'AUTO_ATTESTED' : 'AWAITING_CONFIRMATION';

      for (const slot of needsFile) {
        const state = fileState.get(slot.value!.invoiceFileKey);
        if (state === 'absent') {
          slot.findings.push({ code: 'FILE_NOT_UPLOADED', field: 'invoiceFileKey', message: 'no file has been uploaded under this invoiceFileKey; PUT the file to the uploadUrl first' });
        } else if (state === 'error') {
          slot.findings.push({ code: 'TEMPORARY_FAILURE', field: 'invoiceFileKey', message: 'the invoice file could not be checked; nothing was written for this case and resubmitting it is safe' });
        }
      }

      // In-request duplicates: the first valid occurrence wins, resolved before any write.
      const winners = new Map<string, Slot>();
      let sequence = firstSequence.value;
      const at = now.toISOString();
      const newCaseIdOf = deps.newCaseId ?? newCaseId;
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

      // Phase 3.
      const toWrite = slots.filter((s) => s.newCase);
      writeStarted = toWrite.length > 0;
      const outcomes = await deps.writer.writeAll(
        toWrite.map((slot) => slot.newCase!),
        deadline,
      );
      toWrite.forEach((slot, i) => (slot.outcome = outcomes[i]));
      // Every write failed and storage is sure none landed: the request as a whole had no effect,
      // so it is unavailable (503) and gives its key back, as when storage fails before the writes.
      if (writeStarted && toWrite.every((s) => s.outcome?.kind === 'failed' && !s.outcome.outcomeUnknown)) {
        writeStarted = false;
        throw new ServiceUnavailableError();
      }
    } catch (error) {
      // Failed as a whole before any case was written: give the key back so a retry can use it.
      if (request.idempotencyKey && !writeStarted) await releaseClaim(deps, mode, companyId, request.idempotencyKey, request.requestId, deadline);
      throw error;
    }

    const result = assemble(slots);

    // Phase 4.
    if (request.idempotencyKey) {
      const stored: StoredBatchResponse = { statusCode: result.statusCode, created: result.created, rejected: result.rejected };
      await completeClaim(deps, mode, companyId, request.idempotencyKey, request.requestId, stored, deadline);
    }
    return result;
  }
}

type FileState = 'present' | 'absent' | 'error';

/**
 * Rule 7 for the distinct cited files: the upload records first, in one read; then the object
 * store only for the files without a record (uploaded a moment ago, its report still on the way).
 * When the records cannot be read, every file is asked of the object store instead.
 */
async function checkFiles(deps: CreateCasesDeps, fileKeys: readonly string[], deadline: Deadline): Promise<(readonly [string, FileState])[]> {
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

/**
 * Stored results come back from DynamoDB with their keys in any order; restore the documented one.
 * An answer stored before `livemode` existed was made in the claim's mode, which is the caller's.
 */
function orderCreated(item: CreatedItem, mode: Mode): CreatedItem {
  return { index: item.index, invoiceRef: item.invoiceRef, id: item.id, reference: item.reference, livemode: item.livemode ?? mode === 'live' };
}

function orderRejected(item: RejectedItem): RejectedItem {
  const { index, invoiceRef, code, message, errors, existingCaseId, existingReference } = item;
  return {
    index,
    invoiceRef,
    code,
    message,
    errors,
    ...(existingCaseId !== undefined ? { existingCaseId } : {}),
    ...(existingReference !== undefined ? { existingReference } : {}),
  };
}

/**
 * Gives the key back after the request failed as a whole before any case was written (also when
 * the claim's own answer was lost: the put may have landed). Clean-up: it may use the time kept
 * back from the deadline. Only a claim held by this request and still IN_PROGRESS is deleted.
 */
async function releaseClaim(deps: CreateCasesDeps, mode: Mode, companyId: string, key: string, requestId: string, deadline: Deadline): Promise<void> {
  try {
    await deps.idempotency.release(mode, companyId, key, requestId, deadline.forCleanUp());
  } catch (error) {
    // The claim stays IN_PROGRESS until its horizon passes (the function timeout plus a margin);
    // a retry meanwhile gets 409 with Retry-After, and creates nothing.
    deps.log.error('could not release idempotency claim', { error: error as Error, idempotencyKeyReleased: false });
  }
}

async function completeClaim(deps: CreateCasesDeps, mode: Mode, companyId: string, key: string, requestId: string, response: StoredBatchResponse, deadline: Deadline): Promise<void> {
  try {
    await deps.idempotency.complete(mode, companyId, key, requestId, response, deps.now(), deadline.forCleanUp());
  } catch (error) {
    // The cases are written and the partner gets the result now. The claim stays IN_PROGRESS
    // until its horizon passes: a retry with this key meanwhile gets 409 and creates nothing, and
    // afterwards the invoiceRef guard answers DUPLICATE for each of these cases.
    deps.log.error('could not complete idempotency claim', { error: error as Error });
  }
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
  const stored: StoredCase = {
    caseId: ctx.caseId,
    companyId: ctx.companyId,
    reference: ctx.reference,
    status: 'DRAFT',
    recoveryGate: ctx.gate,
    currency: 'GBP',
    createdAt: ctx.at,
    updatedAt: ctx.at,
    createdByKeyId: ctx.keyId,
    requestId: ctx.requestId,
    mode: ctx.mode,
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
  const errors = slot.findings.length > 0 ? slot.findings.map(({ field, message: m }) => ({ field, message: m })) : [{ field: code === 'DUPLICATE' ? 'invoiceRef' : '', message }];
  return { index: slot.index, invoiceRef: slot.invoiceRef, code, message, errors, ...extra };
}

function duplicateMessage(reference: string): string {
  return `invoiceRef is already being chased in case ${reference}`;
}

function assemble(slots: Slot[]): BatchResult {
  const created: CreatedItem[] = [];
  const rejected: RejectedItem[] = [];
  let writeOutcomeUnknown = 0;
  for (const slot of slots) {
    const code = firstCode(slot.findings);
    if (code) {
      const first = slot.findings.find((f) => f.code === code)!;
      rejected.push(rejection(slot, code, first.message));
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
      } else if (outcome?.kind === 'duplicate') {
        rejected.push(rejection(slot, 'DUPLICATE', duplicateMessage(outcome.existingReference), { existingCaseId: outcome.existingCaseId, existingReference: outcome.existingReference }));
      } else {
        rejected.push(rejection(slot, 'TEMPORARY_FAILURE', temporaryMessage(outcome)));
        if (outcomeUnknown(outcome)) writeOutcomeUnknown++;
      }
      continue;
    }
    const outcome = slot.outcome;
    if (outcome?.kind === 'created') {
      const stored = slot.newCase!.stored;
      created.push({ index: slot.index, invoiceRef: stored.invoiceRef, id: stored.caseId, reference: stored.reference, livemode: stored.mode === 'live' });
    } else if (outcome?.kind === 'duplicate') {
      rejected.push(rejection(slot, 'DUPLICATE', duplicateMessage(outcome.existingReference), { existingCaseId: outcome.existingCaseId, existingReference: outcome.existingReference }));
    } else {
      rejected.push(rejection(slot, 'TEMPORARY_FAILURE', temporaryMessage(outcome)));
      if (outcomeUnknown(outcome)) writeOutcomeUnknown++;
    }
  }
  return { statusCode: created.length > 0 ? 201 : 200, created, rejected, writeOutcomeUnknown };
}

/** Counts by outcome for the request log line and metrics. */
export function outcomeCounts(result: BatchResult): Record<string, number> {
  const counts: Record<string, number> = { created: result.created.length, rejected: result.rejected.length, writeOutcomeUnknown: result.writeOutcomeUnknown };
  for (const item of result.rejected) counts[`rejected_${item.code}`] = (counts[`rejected_${item.code}`] ?? 0) + 1;
  return counts;
}
