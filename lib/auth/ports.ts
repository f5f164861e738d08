import type { Deadline } from '../deadline.js';
import type { Mode } from '../mode.js';

/** What authentication and key administration need from storage (implemented in lib/adapters). */
export interface ApiKeyRecord {
  keyId: string;
  companyId: string;
  scopes: string[];
  /** Fixed at creation; a record stored before test mode existed is live. */
  mode: Mode;
  secretHash: string;
  revoked: boolean;
  createdAt: string;
  revokedAt?: string;
  lastUsedAt?: string;
  /** Set on a key made by `key rotate`: the key it replaces. */
  rotatedFrom?: string;
}

export interface ApiKeyStore {
  /** Strongly consistent: a revocation must take effect on the very next request. */
  get(keyId: string, deadline?: Deadline): Promise<ApiKeyRecord | undefined>;
  /** Fails when a key with this id exists. */
  create(record: ApiKeyRecord): Promise<void>;
  listForCompany(companyId: string): Promise<ApiKeyRecord[]>;
  /** Returns false when the key does not exist. */
  revoke(keyId: string, at: string): Promise<boolean>;
  /** Sets lastUsedAt unless it was set after `notAfter` (at most one write a minute per key). */
  touch(keyId: string, at: string, notAfter: string, deadline?: Deadline): Promise<void>;
}
