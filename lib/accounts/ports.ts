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
