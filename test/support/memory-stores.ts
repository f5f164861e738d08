import type { CompanyRecord, CompanyStore } from '../../lib/accounts/ports.js';
import type { ApiKeyRecord, ApiKeyStore } from '../../lib/auth/ports.js';
import type { StoredCase } from '../../lib/cases/case-record.js';
import { lifecycleOf } from '../../lib/cases/case-record.js';
import type { CaseEvent } from '../../lib/cases/case-lifecycle.js';
import type {
  CaseLister,
  CaseChange,
  CaseChangeStore,
  CaseReader,
  ConfirmationRecord,
  CaseWriter,
  ClaimRequest,
  ClaimResult,
  IdempotencyStore,
  InvoiceFiles,
  NewCase,
  ReferenceAllocator,
  StoredResponse,
  WriteOutcome,
} from '../../lib/cases/ports.js';
import { isPast, type Deadline } from '../../lib/deadline.js';
import { ServiceUnavailableError } from '../../lib/errors.js';
import type { Mode } from '../../lib/mode.js';

/** As the real adapters: a call made after the request's deadline has passed fails as unavailable. */
function checkDeadline(deadline: Deadline | undefined): void {
  if (deadline && isPast(deadline)) throw new ServiceUnavailableError();
}

/**
 * The store interfaces implemented in memory, with the same semantics as the DynamoDB / S3 ones
 * (conditional creation, duplicate guard, claims), for measuring the handlers' own CPU time: no
 * I/O, no SDK. Every method answers through a resolved promise, as the real ones do.
 */
export class MemoryApiKeyStore implements ApiKeyStore {
  readonly records = new Map<string, ApiKeyRecord>();

  async get(keyId: string, deadline?: Deadline): Promise<ApiKeyRecord | undefined> {
    checkDeadline(deadline);
    const record = this.records.get(keyId);
    // As the DynamoDB store: a record kept from before test mode is live.
    return record ? { ...record, mode: record.mode ?? 'live', scopes: [...record.scopes] } : undefined;
  }
  async create(record: ApiKeyRecord): Promise<void> {
    if (this.records.has(record.keyId)) throw new Error('key exists');
    this.records.set(record.keyId, { ...record });
  }
  async listForCompany(companyId: string): Promise<ApiKeyRecord[]> {
    return [...this.records.values()].filter((r) => r.companyId === companyId);
  }
  async revoke(keyId: string, at: string): Promise<boolean> {
    const record = this.records.get(keyId);
    if (!record) return false;
    record.revoked = true;
    record.revokedAt ??= at;
    return true;
  }
  async touch(keyId: string, at: string, notAfter: string, deadline?: Deadline): Promise<void> {
    checkDeadline(deadline);
    const record = this.records.get(keyId);
    if (record && (!record.lastUsedAt || record.lastUsedAt < notAfter)) record.lastUsedAt = at;
  }
}

export class MemoryCompanyStore implements CompanyStore {
  readonly records = new Map<string, CompanyRecord>();

  async get(companyId: string, deadline?: Deadline): Promise<CompanyRecord | undefined> {
    checkDeadline(deadline);
    const record = this.records.get(companyId);
    return record ? { ...record } : undefined;
  }
  async create(record: CompanyRecord): Promise<void> {
    if (this.records.has(record.companyId)) throw new Error('company exists');
    this.records.set(record.companyId, { ...record });
  }
  async list(): Promise<CompanyRecord[]> {
    return [...this.records.values()];
  }
  async setAutoAttestation(companyId: string, enabled: boolean, at: string): Promise<boolean> {
    const record = this.records.get(companyId);
    if (!record) return false;
    Object.assign(record, { autoAttestation: enabled, updatedAt: at });
    return true;
  }
}

/**
 * Guard + case + audit record + `case.created` event, all or nothing for each case, like the
 * DynamoDB transactions (a duplicate or a failed case records no event); each
 * mode its own world, as the mode is in every DynamoDB key. `writeAll` goes through `write` case
 * by case, so a test can make single cases fail by replacing `write`.
 */
export class MemoryCaseWriter implements CaseWriter, CaseReader, CaseChangeStore, Pick<CaseLister, 'findByInvoiceRef'> {
  readonly guards = new Map<string, { caseId: string; reference: string }>();
  /** The cases that gave an invoiceRef up, by guard key: DynamoDB's `WITHDRAWN#` items in the guard's partition. */
  readonly withdrawnRefs = new Map<string, string[]>();
  readonly cases = new Map<string, StoredCase>();
  readonly audits = new Map<string, NewCase['audit']>();
  readonly events: CaseEvent[] = [];
  readonly confirmations = new Map<string, ConfirmationRecord>();

  /** As the DynamoDB store: conditional on the lifecycle fields the change was computed from. */
  async apply(change: CaseChange, deadline?: Deadline): Promise<'applied' | 'stale'> {
    checkDeadline(deadline);
    const current = this.cases.get(change.before.caseId);
    if (!current) return 'stale';
    const now = lifecycleOf(current);
    const was = lifecycleOf(change.before);
    if (
      now.status !== was.status ||
      now.recoveryGate !== was.recoveryGate ||
      now.debtorVerification.status !== was.debtorVerification.status ||
      (current.revision ?? 0) !== (change.before.revision ?? 0)
    )
      return 'stale';
    if (change.confirmation && this.confirmations.has(change.before.caseId)) return 'stale';
    this.cases.set(change.after.caseId, { ...change.after });
    this.events.push(change.event);
    if (change.confirmation) this.confirmations.set(change.before.caseId, { ...change.confirmation });
    if (change.releaseInvoiceRef) {
      const guardKey = `${current.mode}|${current.companyId}|${current.invoiceRefKey}`;
      if (this.guards.get(guardKey)?.caseId === current.caseId) this.guards.delete(guardKey);
      this.withdrawnRefs.set(guardKey, [...(this.withdrawnRefs.get(guardKey) ?? []), current.caseId]);
    }
    return 'applied';
  }

  /** As the DynamoDB lister: the case holding the guard and the withdrawn ones, newest first. */
  async findByInvoiceRef(mode: Mode, companyId: string, invoiceRefKey: string, deadline?: Deadline): Promise<StoredCase[]> {
    checkDeadline(deadline);
    const guardKey = `${mode}|${companyId}|${invoiceRefKey}`;
    const holder = this.guards.get(guardKey)?.caseId;
    const ids = [...(this.withdrawnRefs.get(guardKey) ?? []), ...(holder ? [holder] : [])];
    const position = (c: StoredCase) => `${c.createdAt}#${c.caseId}`;
    return ids
      .flatMap((id) => {
        const found = this.cases.get(id);
        return found && found.mode === mode && found.companyId === companyId ? [{ ...found }] : [];
      })
      .sort((a, b) => (position(a) < position(b) ? 1 : position(a) > position(b) ? -1 : 0));
  }

  async writeAll(newCases: readonly NewCase[], deadline?: Deadline): Promise<WriteOutcome[]> {
    return Promise.all(newCases.map((c) => this.write(c, deadline)));
  }

  async write(newCase: NewCase, deadline?: Deadline): Promise<WriteOutcome> {
    if (deadline && isPast(deadline)) return { kind: 'failed', attempts: 0, error: 'DeadlinePassed' };
    const { stored, audit } = newCase;
    const guardKey = `${stored.mode}|${stored.companyId}|${stored.invoiceRefKey}`;
    const existing = this.guards.get(guardKey);
    if (existing) {
      if (existing.caseId === stored.caseId) return { kind: 'created', attempts: 1 };
      return { kind: 'duplicate', existingCaseId: existing.caseId, existingReference: existing.reference, attempts: 1 };
    }
    this.guards.set(guardKey, { caseId: stored.caseId, reference: stored.reference });
    this.cases.set(stored.caseId, { ...stored });
    this.audits.set(stored.caseId, { ...audit });
    this.events.push(newCase.event);
    return { kind: 'created', attempts: 1 };
  }

  async get(mode: Mode, caseId: string, deadline?: Deadline): Promise<StoredCase | undefined> {
    checkDeadline(deadline);
    // Case ids are unique across modes here; the DynamoDB key holds the mode, so another mode's case is not found.
    const found = this.cases.get(caseId);
    return found?.mode === mode ? { ...found } : undefined;
  }

  /** Drops everything written (keeps long CPU loops from growing the heap). */
  clear(): void {
    this.guards.clear();
    this.cases.clear();
    this.audits.clear();
    this.events.length = 0;
    this.confirmations.clear();
    this.withdrawnRefs.clear();
  }
}

interface Claim {
  requestId: string;
  state: 'IN_PROGRESS' | 'COMPLETED';
  claimedAtEpoch: number;
  ttl: number;
  requestHash: string;
  response?: StoredResponse;
}

export class MemoryIdempotencyStore implements IdempotencyStore {
  readonly claims = new Map<string, Claim>();

  async claim(request: ClaimRequest, deadline?: Deadline): Promise<ClaimResult> {
    checkDeadline(deadline);
    const key = `${request.mode}|${request.companyId}|${request.idempotencyKey}`;
    const nowSeconds = Math.floor(request.now.getTime() / 1000);
    const old = this.claims.get(key);
    const free =
      !old || old.ttl < nowSeconds || (old.state === 'IN_PROGRESS' && old.claimedAtEpoch < nowSeconds - request.staleAfterSeconds);
    if (!free) {
      if (old.state === 'IN_PROGRESS' && old.requestId === request.requestId) return { claimed: true };
      return old.state === 'COMPLETED' && old.response
        ? { claimed: false, state: 'COMPLETED', response: old.response, requestHash: old.requestHash }
        : { claimed: false, state: 'IN_PROGRESS', claimedAt: old.claimedAtEpoch, requestHash: old.requestHash };
    }
    this.claims.set(key, {
      requestId: request.requestId,
      state: 'IN_PROGRESS',
      claimedAtEpoch: nowSeconds,
      ttl: nowSeconds + request.ttlSeconds,
      requestHash: request.requestHash,
    });
    return { claimed: true };
  }
  async complete(
    mode: Mode,
    companyId: string,
    idempotencyKey: string,
    requestId: string,
    response: StoredResponse,
    _now?: Date,
    deadline?: Deadline,
  ): Promise<void> {
    checkDeadline(deadline);
    const claim = this.claims.get(`${mode}|${companyId}|${idempotencyKey}`);
    if (!claim || claim.requestId !== requestId) throw new Error('claim lost');
    // The real store sends the response to DynamoDB: serialise it, as marshalling would walk it.
    claim.response = JSON.parse(JSON.stringify(response)) as StoredResponse;
    claim.state = 'COMPLETED';
  }
  async release(mode: Mode, companyId: string, idempotencyKey: string, requestId: string, deadline?: Deadline): Promise<void> {
    checkDeadline(deadline);
    const key = `${mode}|${companyId}|${idempotencyKey}`;
    const claim = this.claims.get(key);
    // As the DynamoDB condition: only this request's claim, and only while it is in progress.
    if (claim?.requestId === requestId && claim.state === 'IN_PROGRESS') this.claims.delete(key);
  }
}

export class MemoryReferenceAllocator implements ReferenceAllocator {
  private next = 1;

  async reserve(count: number, deadline?: Deadline): Promise<number> {
    checkDeadline(deadline);
    if (!Number.isInteger(count) || count < 1) throw new Error(`cannot reserve ${count} references`);
    const first = this.next;
    this.next += count;
    return first;
  }
}

/** Objects (`keys`) and the upload records of those the object store has reported (`recordedKeys`). */
export class MemoryFileStore implements InvoiceFiles {
  readonly keys = new Set<string>();
  readonly recordedKeys = new Set<string>();

  async recorded(fileKeys: readonly string[], deadline?: Deadline): Promise<ReadonlySet<string>> {
    checkDeadline(deadline);
    return new Set(fileKeys.filter((key) => this.recordedKeys.has(key)));
  }

  async exists(fileKey: string, deadline?: Deadline): Promise<boolean> {
    checkDeadline(deadline);
    return this.keys.has(fileKey);
  }
}

/** A `Log` that keeps what it was told, for tests that assert what a use case logged. */
export class MemoryLog {
  readonly lines: { level: 'warn' | 'error'; message: string; fields: Record<string, unknown> }[] = [];
  warn(message: string, fields: Record<string, unknown> = {}): void {
    this.lines.push({ level: 'warn', message, fields });
  }
  error(message: string, fields: Record<string, unknown> = {}): void {
    this.lines.push({ level: 'error', message, fields });
  }
}

/** A `Log` that drops everything (CPU measurements). */
export const silentLog = { warn: () => undefined, error: () => undefined };
