import type { CompanyRecord } from '../accounts/ports.js';
import type { Deadline } from '../deadline.js';
import type { Mode } from '../mode.js';
import type { CaseEvent, CaseEventType } from './case-lifecycle.js';
import type { CaseStatus, RecoveryGate, StoredCase } from './case-record.js';
import type { StoredPayment } from './recovery.js';

/**
 * What the case use cases need from storage, declared here and implemented in lib/adapters
 * (DynamoDB, S3) and, for the fast test tier, in memory (test/support/memory-stores.ts). The port
 * contract suite (test/integration/port-contracts.test.ts) holds both to the same behaviour.
 *
 * Every call on a request's path takes the request's Deadline (lib/deadline.ts): it gives up when
 * the deadline passes, and a transient failure that outlasts it throws ServiceUnavailableError.
 * Without one (operator tools), an adapter applies a bounded deadline of its own.
 */

export interface CaseReader {
  /**
   * Strongly consistent: a case reported created is found by the very next read. Only the cases
   * of `mode` exist for the read: another mode's case is not found.
   */
  get(mode: Mode, caseId: string, deadline?: Deadline): Promise<StoredCase | undefined>;
}

/** Filters of a case list, as storage applies them. Bounds are ISO 8601 UTC with milliseconds, the form `createdAt` is stored in. */
export interface CaseListFilters {
  status?: CaseStatus;
  recoveryGate?: RecoveryGate;
  /** Inclusive. */
  createdFrom?: string;
  /** Exclusive. */
  createdBefore?: string;
}

/**
 * Where a walk through a company's cases (or events) stands, as the lister reported it: the domain
 * seals it into the cursor unread and hands it back for the next page. `after` is the storage
 * position below which the walk continues (every item at or above it has been returned);
 * `doneShards` names the storage partitions that hold nothing further, so the next page skips them.
 */
export interface ListPosition {
  after: string;
  doneShards: number[];
}
/** The case list's position (the name the case list has always used). */
export type CaseListPosition = ListPosition;

export interface CasePageRequest {
  mode: Mode;
  companyId: string;
  filters: CaseListFilters;
  /** 1 to 100. */
  limit: number;
  position?: CaseListPosition;
}

export interface CasePage {
  /** Newest first: `createdAt` descending, then case id descending; at most `limit`. */
  cases: StoredCase[];
  /** Null when the walk has returned every matching case. */
  next: CaseListPosition | null;
}

export interface CaseLister {
  /** One page of a company's cases; may lag creation by about a second (a secondary index). */
  page(request: CasePageRequest, deadline?: Deadline): Promise<CasePage>;
  /**
   * Every case of the company whose invoiceRef has this guard key (`invoiceRefKey`): the one that
   * holds it now, if any, and every withdrawn one that gave it up; newest first (`createdAt`
   * descending, then case id descending). Strongly consistent: a case reported created, or
   * withdrawn, is found as such by the very next look-up. Throws ServiceUnavailableError when
   * storage cannot answer for every case.
   */
  findByInvoiceRef(mode: Mode, companyId: string, invoiceRefKey: string, deadline?: Deadline): Promise<StoredCase[]>;
}

/** The immutable audit record of the eligibility attestation made for one case. */
export interface AttestationRecord {
  caseId: string;
  companyId: string;
  mode: Mode;
  b2b: boolean;
  under10k: boolean;
  within6years: boolean;
  undisputed: boolean;
  attestedBy: string;
  attestedAt: string;
  keyId: string;
  requestId: string;
  sourceIp: string;
  userAgent?: string;
}

export interface NewCase {
  stored: StoredCase;
  audit: AttestationRecord;
  /** The `case.created` event announcing it (the outbox: written in the same transaction as the case, or not at all). */
  event: CaseEvent;
}

export type WriteOutcome =
  | { kind: 'created'; attempts: number }
  | { kind: 'duplicate'; existingCaseId: string; existingReference: string; attempts: number }
  /** `outcomeUnknown`: an attempt may have committed and storage could not be asked afterwards. */
  | { kind: 'failed'; attempts: number; error: string; outcomeUnknown?: true };

export interface CaseWriter {
  /**
   * Writes, for each case, the invoiceRef guard, the case, its audit record and its `case.created`
   * event, all or none of the four (never an event without its case, never a case without its
   * event); never throws. Answers one outcome per case, in the order given. The cases must have
   * distinct invoiceRefs (the use case resolves duplicates within a request before writing). A
   * guard already holding this very case id (a retry of our own write) counts as created; a
   * duplicate or a failed case writes nothing, its event included.
   */
  writeAll(newCases: readonly NewCase[], deadline?: Deadline): Promise<WriteOutcome[]>;
}

/**
 * A batch's answer as kept on its Idempotency-Key, to be replayed. The store gives it back with
 * each item's fields in the documented order, whatever order storage kept them in.
 */
export interface StoredBatchResponse {
  /** CreatedItem[] as the use case made it. */
  created: unknown[];
  /** RejectedItem[] as the use case made it. */
  rejected: unknown[];
  /** Set when the answer was too large to keep whole: rejected items' echoes are shortened. */
  compacted?: boolean;
}

/** A payment's answer as kept on its Idempotency-Key (`POST /api/v1/cases/{id}/payments`): its 201 body. */
export interface StoredPaymentResponse {
  /** PaymentView as the use case made it. */
  payment: unknown;
  /** CaseView after the payment, as the use case made it. */
  case: unknown;
}

/** Whatever answer a key holds: the routes share one key space per company and mode. */
export type StoredResponse = StoredBatchResponse | StoredPaymentResponse;

export type ClaimResult =
  | { claimed: true }
  /** `claimedAt`: epoch seconds of the claim still running, so a replay knows when to come back. */
  | { claimed: false; state: 'IN_PROGRESS'; claimedAt: number; requestHash?: string }
  | { claimed: false; state: 'COMPLETED'; response: StoredResponse; requestHash?: string };

/** Completing a claim this request holds with its answer (IdempotencyStore.complete, or inside a recovery change's transaction). */
export interface ClaimCompletion {
  mode: Mode;
  companyId: string;
  idempotencyKey: string;
  requestId: string;
  response: StoredResponse;
  now: Date;
}

export interface ClaimRequest {
  mode: Mode;
  companyId: string;
  idempotencyKey: string;
  requestId: string;
  now: Date;
  ttlSeconds: number;
  /** An IN_PROGRESS claim older than this is abandoned (its Lambda died) and may be taken over. */
  staleAfterSeconds: number;
  /** SHA-256 of the request's canonical body: a replay can then say whether it is the same request. */
  requestHash: string;
}

/** Each mode has its own Idempotency-Keys: the same key in live and in test names two claims. */
export interface IdempotencyStore {
  /** Conditional: claims a new, expired or stale key; otherwise reports the existing claim. */
  claim(request: ClaimRequest, deadline?: Deadline): Promise<ClaimResult>;
  /** Stores the answer on a claim this request holds (a replay reads it back in the claim's `response`). */
  complete(
    mode: Mode,
    companyId: string,
    idempotencyKey: string,
    requestId: string,
    response: StoredResponse,
    now: Date,
    deadline?: Deadline,
  ): Promise<void>;
  /** Deletes the claim only while this request holds it and it is IN_PROGRESS. */
  release(mode: Mode, companyId: string, idempotencyKey: string, requestId: string, deadline?: Deadline): Promise<void>;
}

export interface ReferenceAllocator {
  /** Reserves `count` consecutive sequence numbers, unique across the service; returns the first. */
  reserve(count: number, deadline?: Deadline): Promise<number>;
}

export interface InvoiceFiles {
  /**
   * The keys among `fileKeys` whose upload the object store has reported (S3 event → upload
   * record), read strongly consistent in one call; throws when storage cannot tell. A key not in
   * the answer may still exist (its report has not arrived yet): ask `exists`.
   */
  recorded(fileKeys: readonly string[], deadline?: Deadline): Promise<ReadonlySet<string>>;
  /** true when an object exists under the key; false when it does not; throws when storage cannot tell. */
  exists(fileKey: string, deadline?: Deadline): Promise<boolean>;
}

export interface CompanySettings {
  get(companyId: string, deadline?: Deadline): Promise<CompanyRecord | undefined>;
}

/**
 * Who confirmed a case (spec rule 4: a confirmation made in the partner's dashboard). The dashboard
 * always names an e-mail address; an operator may not (`admin case confirm --email` is optional).
 */
export interface ConfirmedBy {
  name: string;
  email?: string;
}

/** Where a confirmation came from: the dashboard (internal route), an operator (admin CLI), or the test-mode helper route. */
export type ConfirmationSource = 'dashboard' | 'operator' | 'test-helper';

/** The immutable record of a confirmation, written in the same transaction as the case change. */
export interface ConfirmationRecord {
  caseId: string;
  companyId: string;
  mode: Mode;
  confirmedBy: ConfirmedBy;
  confirmedAt: string;
  requestId: string;
  source: ConfirmationSource;
  /**
   * The authenticated caller behind the confirmation, when there is one: the IAM principal's ARN
   * that signed the dashboard's request, or `apiKey:<keyId>` for the test-mode helper.
   */
  principal?: string;
  /** The `case.updated` event written with it. */
  eventId: string;
}

/**
 * One change of a case's lifecycle, as the rules in case-lifecycle.ts computed it from `before`:
 * the case after it, the event announcing it, and what else the same transaction writes.
 */
export interface CaseChange {
  /**
   * The case as read: the change applies only while its `status`, `recoveryGate`,
   * `debtorVerification.status` and `revision` are still these (a payment in between changes the
   * revision: the event's case, amounts included, is then recomputed).
   */
  before: StoredCase;
  /** The case after the change (lifecycle fields, `statusHistory`, `updatedAt`). */
  after: StoredCase;
  event: CaseEvent;
  /** Confirm: the confirmation record, new (a case is confirmed once). */
  confirmation?: ConfirmationRecord;
  /**
   * Withdraw: give the invoiceRef guard up, only while it still names this case, and leave the
   * withdrawn case findable under its invoiceRef; the same invoiceRef may then be submitted again.
   */
  releaseInvoiceRef?: boolean;
}

export interface CaseChangeStore {
  /** Strongly consistent, like CaseReader.get. */
  get(mode: Mode, caseId: string, deadline?: Deadline): Promise<StoredCase | undefined>;
  /**
   * All of the change or none of it, in one transaction: the case, its event, and the confirmation
   * record or the guard's release. `stale` when the case's lifecycle fields are no longer those of
   * `before` (another change won): nothing was written; read again and apply the rule again.
   * Throws ServiceUnavailableError when storage cannot answer (nothing may be assumed written).
   */
  apply(change: CaseChange, deadline?: Deadline): Promise<'applied' | 'stale'>;
}

/** An event as storage keeps it: the event itself (the bytes a partner reads) and whose it is. */
export interface StoredEvent {
  event: CaseEvent;
  /** The event's JSON exactly as stored: what a webhook delivers, byte for byte (and what it is signed over). */
  payload: string;
  companyId: string;
  mode: Mode;
}

export interface EventReader {
  /**
   * Strongly consistent. Only the events of `mode` exist for the read. Storage may still hold an
   * event past its retention (TTL deletion lags): the use case decides whether it is shown.
   */
  get(mode: Mode, eventId: string, deadline?: Deadline): Promise<StoredEvent | undefined>;
}

/** Filters of an event list, as storage applies them. Bounds are ISO 8601 UTC with milliseconds, as `createdAt` is stored. */
export interface EventListFilters {
  type?: CaseEventType;
  caseId?: string;
  /** Inclusive. The use case raises it to the start of the retention period. */
  createdFrom?: string;
  /** Exclusive. */
  createdBefore?: string;
}

export interface EventPageRequest {
  mode: Mode;
  companyId: string;
  filters: EventListFilters;
  /** 1 to 100. */
  limit: number;
  position?: ListPosition;
}

export interface EventPage {
  /** Newest first: `createdAt` descending, then event id descending; at most `limit`. */
  events: StoredEvent[];
  /** Null when the walk has returned every matching event. */
  next: ListPosition | null;
}

export interface EventLister {
  /** One page of a company's events; may lag the change it announces by about a second (a secondary index). */
  page(request: EventPageRequest, deadline?: Deadline): Promise<EventPage>;
}

/** Where a recovery update came from: the back office (internal route), an operator (admin command), or the test-mode helper. */
export type RecoveryUpdateSource = 'back-office' | 'operator' | 'test-helper';

/**
 * The immutable record of one applied back-office update (kept forever, no TTL: the same updateId
 * answers `already_applied` however late it comes again), written in the same transaction as the
 * case change and its event.
 */
export interface RecoveryUpdateRecord {
  updateId: string;
  companyId: string;
  mode: Mode;
  caseId: string;
  /** The update as applied (its type and fields, without updateId and by). */
  update: Record<string, unknown>;
  by: { name: string; email: string };
  appliedAt: string;
  requestId: string;
  source: RecoveryUpdateSource;
  /** The `case.updated` event written with it. */
  eventId: string;
}

/** One recovery change, as the rules of recovery.ts computed it from `before`. */
export interface RecoveryChange {
  /** The case as read: the change applies only while its `revision` and `status` are still these. */
  before: StoredCase;
  after: StoredCase;
  event: CaseEvent;
  /** A payment's own immutable item. */
  payment?: StoredPayment;
  /** A back-office update's record, new (its updateId once per company and mode). */
  update?: RecoveryUpdateRecord;
  /** The change closed the case: give its invoiceRef up, as a withdrawal does (CaseChange.releaseInvoiceRef). */
  releaseInvoiceRef?: boolean;
  /**
   * The Idempotency-Key claim this request holds, completed with its answer in the same transaction
   * (so a payment and its key's answer land together, in one round trip); the transaction applies
   * only while the claim is still this request's.
   */
  completeClaim?: ClaimCompletion;
}

export interface RecoveryStore {
  /** Strongly consistent, like CaseReader.get. */
  get(mode: Mode, caseId: string, deadline?: Deadline): Promise<StoredCase | undefined>;
  /** The record of an update already applied under this updateId, strongly consistent; undefined if none. */
  findUpdate(mode: Mode, companyId: string, updateId: string, deadline?: Deadline): Promise<RecoveryUpdateRecord | undefined>;
  /**
   * All of the change or none of it, in one transaction: the case (conditional on `before`'s
   * revision and status), its event, the payment item, the update record, the invoiceRef's release.
   * `stale`: another change won the case (nothing written; read again and decide again).
   * `already_applied`: the update's record exists (nothing written). Throws ServiceUnavailableError
   * when storage cannot answer, or when `completeClaim`'s claim is no longer this request's (nothing written).
   */
  apply(change: RecoveryChange, deadline?: Deadline): Promise<'applied' | 'stale' | 'already_applied'>;
  /** Every payment of the case, oldest first (in the order recorded), strongly consistent. */
  listPayments(mode: Mode, caseId: string, deadline?: Deadline): Promise<StoredPayment[]>;
}
