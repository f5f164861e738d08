import type { CompanyRecord } from '../accounts/ports.js';
import type { Deadline } from '../deadline.js';
import type { StoredCase } from './case-record.js';

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
  /** Strongly consistent: a case reported created is found by the very next read. */
  get(caseId: string, deadline?: Deadline): Promise<StoredCase | undefined>;
}

/** The immutable audit record of the eligibility attestation made for one case. */
export interface AttestationRecord {
  caseId: string;
  companyId: string;
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
}

export type WriteOutcome =
  | { kind: 'created'; attempts: number }
  | { kind: 'duplicate'; existingCaseId: string; existingReference: string; attempts: number }
  /** `outcomeUnknown`: an attempt may have committed and storage could not be asked afterwards. */
  | { kind: 'failed'; attempts: number; error: string; outcomeUnknown?: true };

export interface CaseWriter {
  /**
   * Writes the invoiceRef guard, the case and its audit record, all or none; never throws. A guard
   * already holding this very case id (a retry of our own write) counts as created.
   */
  write(newCase: NewCase, deadline?: Deadline): Promise<WriteOutcome>;
}

export interface StoredBatchResponse {
  statusCode: number;
  created: unknown[];
  rejected: unknown[];
  /** Set when the answer was too large to keep whole: rejected items' echoes are shortened. */
  compacted?: boolean;
}

export type ClaimResult =
  | { claimed: true }
  /** `claimedAt`: epoch seconds of the claim still running, so a replay knows when to come back. */
  | { claimed: false; state: 'IN_PROGRESS'; claimedAt: number; requestHash?: string }
  | { claimed: false; state: 'COMPLETED'; response: StoredBatchResponse; requestHash?: string };

export interface ClaimRequest {
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

export interface IdempotencyStore {
  /** Conditional: claims a new, expired or stale key; otherwise reports the existing claim. */
  claim(request: ClaimRequest, deadline?: Deadline): Promise<ClaimResult>;
  /** Stores the answer on a claim this request holds. */
  complete(companyId: string, idempotencyKey: string, requestId: string, response: StoredBatchResponse, now: Date, deadline?: Deadline): Promise<void>;
  /** Deletes the claim only while this request holds it and it is IN_PROGRESS. */
  release(companyId: string, idempotencyKey: string, requestId: string, deadline?: Deadline): Promise<void>;
}

export interface ReferenceAllocator {
  /** Reserves `count` consecutive sequence numbers, unique across the service; returns the first. */
  reserve(count: number, deadline?: Deadline): Promise<number>;
}

export interface InvoiceFiles {
  /** true when an object exists under the key; false when it does not; throws when storage cannot tell. */
  exists(fileKey: string, deadline?: Deadline): Promise<boolean>;
}

export interface CompanySettings {
  get(companyId: string, deadline?: Deadline): Promise<CompanyRecord | undefined>;
}
