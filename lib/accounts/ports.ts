import type { Deadline } from '../deadline.js';

/** What account administration and case creation need to know of a company (implemented in lib/adapters). */
export interface CompanyRecord {
  companyId: string;
  name: string;
  /** Agreed when access was approved: cases created through the API may progress automatically. */
  autoAttestation: boolean;
  createdAt: string;
  updatedAt: string;
}

export interface CompanyStore {
  /** Strongly consistent. */
  get(companyId: string, deadline?: Deadline): Promise<CompanyRecord | undefined>;
  /** Fails when a company with this id exists. */
  create(record: CompanyRecord): Promise<void>;
  list(): Promise<CompanyRecord[]>;
  /** Returns false when the company does not exist. */
  setAutoAttestation(companyId: string, enabled: boolean, at: string): Promise<boolean>;
}

/**
 * A company's test-mode data (product rules "Test mode (sandbox)"), for the operator's
 * `company clear-test-data`. Implementations find test data by its own keys (the test-data
 * listing, the test upload prefix), so live data is never read, let alone deleted.
 */
export interface TestModeItemStore {
  /**
   * Deletes the company's test cases, audit records, invoiceRef guards, events, confirmation
   * records, withdrawn cases' invoiceRef items and Idempotency-Key claims; returns how many items.
   * Each case goes with everything that names it, all or none (a guard only while it names the
   * case), so a run that stops part-way leaves whole cases and a second run clears the rest.
   */
  clearTestItems(companyId: string): Promise<number>;
}

export interface TestModeUploadStore {
  /** Deletes the company's test uploads; returns how many objects. */
  clearTestUploads(companyId: string): Promise<number>;
}
