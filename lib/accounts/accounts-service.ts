import { generateApiKey } from '../auth/api-key.js';
import type { ApiKeyRecord, ApiKeyStore } from '../auth/ports.js';
import { parseScopeList, type Scope } from '../auth/scopes.js';
import type { Mode } from '../mode.js';
import { randomBase62 } from '../random-id.js';
import type { CompanyRecord, CompanyStore, TestModeItemStore, TestModeUploadStore } from './ports.js';

/**
 * Operator use cases: onboarding companies and issuing, listing, revoking and rotating their API
 * keys. Used by the admin command, the local stack's demo account and the tests. The full key is
 * returned once, from create/rotate; only its hash is ever stored.
 */
export class AccountsError extends Error {}

export interface IssuedKey {
  keyId: string;
  companyId: string;
  apiKey: string;
  scopes: string[];
  mode: Mode;
  createdAt: string;
}

/** A key as operators may see it: never the secret nor its hash. */
export type KeySummary = Omit<ApiKeyRecord, 'secretHash'>;

export const COMPANY_ID_PATTERN = /^cmp_[0-9A-Za-z]{16}$/;

export class AccountsService {
  constructor(
    private readonly companies: CompanyStore,
    private readonly keys: ApiKeyStore,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async createCompany(name: string, autoAttestation = false): Promise<CompanyRecord> {
    const trimmed = name.trim();
    if (trimmed.length === 0 || trimmed.length > 200) throw new AccountsError('Company name must be 1 to 200 characters.');
    const at = this.now().toISOString();
    const record: CompanyRecord = { companyId: `cmp_${randomBase62(16)}`, name: trimmed, autoAttestation, createdAt: at, updatedAt: at };
    await this.companies.create(record);
    return record;
  }

  listCompanies(): Promise<CompanyRecord[]> {
    return this.companies.list();
  }

  async setAutoAttestation(companyId: string, enabled: boolean): Promise<void> {
    if (!(await this.companies.setAutoAttestation(companyId, enabled, this.now().toISOString()))) {
      throw new AccountsError(`No company with id ${companyId}.`);
    }
  }

  /** `mode` is fixed for the key's life (a rotation keeps it). */
  async createKey(companyId: string, scopes: readonly Scope[] | string, rotatedFrom?: string, mode: Mode = 'live'): Promise<IssuedKey> {
    const scopeList = typeof scopes === 'string' ? parseScopeList(scopes) : [...new Set(scopes)];
    if (scopeList.length === 0) throw new AccountsError('A key needs at least one scope.');
    if (!(await this.companies.get(companyId))) throw new AccountsError(`No company with id ${companyId}.`);
    const generated = generateApiKey(mode);
    const createdAt = this.now().toISOString();
    await this.keys.create({
      keyId: generated.keyId,
      companyId,
      scopes: scopeList,
      mode,
      secretHash: generated.secretHash,
      revoked: false,
      createdAt,
      ...(rotatedFrom ? { rotatedFrom } : {}),
    });
    return { keyId: generated.keyId, companyId, apiKey: generated.apiKey, scopes: scopeList, mode, createdAt };
  }

  async listKeys(companyId: string): Promise<KeySummary[]> {
    const records = await this.keys.listForCompany(companyId);
    return records.map(({ secretHash: _secretHash, ...summary }) => summary);
  }

  /**
   * Revokes a key. A key revoked before is refused rather than reported as revoked now: the operator
   * learns when it really was (two revocations racing each other may both succeed; the store keeps
   * the first revokedAt either way).
   */
  async revokeKey(keyId: string): Promise<void> {
    const existing = await this.keys.get(keyId);
    if (existing?.revoked)
      throw new AccountsError(`Key ${keyId} was already revoked${existing.revokedAt ? ` at ${existing.revokedAt}` : ''}; nothing changed.`);
    if (!existing || !(await this.keys.revoke(keyId, this.now().toISOString()))) throw new AccountsError(`No key with id ${keyId}.`);
  }

  /**
   * Deletes a company's test-mode data: its test cases, audit records, guards, events, confirmation
   * records, withdrawn invoiceRef items and claims, then its test uploads. Live data is found by other keys and is never touched.
   */
  async clearTestData(
    companyId: string,
    stores: { items: TestModeItemStore; uploads: TestModeUploadStore },
  ): Promise<{ companyId: string; items: number; uploads: number }> {
    if (!(await this.companies.get(companyId))) throw new AccountsError(`No company with id ${companyId}.`);
    const items = await stores.items.clearTestItems(companyId);
    const uploads = await stores.uploads.clearTestUploads(companyId);
    return { companyId, items, uploads };
  }

  /** A new key with the same company and scopes; the old key keeps working until revoked. */
  async rotateKey(keyId: string): Promise<IssuedKey> {
    const old = await this.keys.get(keyId);
    if (!old) throw new AccountsError(`No key with id ${keyId}.`);
    if (old.revoked) throw new AccountsError(`Key ${keyId} is revoked; create a new key instead.`);
    return this.createKey(old.companyId, old.scopes as Scope[], keyId, old.mode);
  }
}
