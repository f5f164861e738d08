import { AccountsService } from '../../lib/accounts/accounts-service.js';
import { tableAdapters } from '../../lib/adapters/production-adapters.js';

export interface DemoAccount {
  created: boolean;
  companyId: string;
  apiKey?: string;
  /** The demo test-mode key (`pca_test_…`), made beside the live one. */
  testApiKey?: string;
}

/**
 * On the first start (no company in the table) a demo company and two keys with both case scopes
 * are created, one live and one test mode; the keys are returned once, to be printed once. Later starts find the company and
 * create nothing: the secret cannot be read back, so a new key is made with the admin command.
 */
export async function ensureDemoAccount(): Promise<DemoAccount> {
  const stores = tableAdapters();
  const accounts = new AccountsService(stores.companies, stores.keys);
  const existing = await accounts.listCompanies();
  const demo = existing.find((c) => c.name === 'Demo Partner Ltd') ?? existing[0];
  if (demo) return { created: false, companyId: demo.companyId };
  const company = await accounts.createCompany('Demo Partner Ltd', false);
  const key = await accounts.createKey(company.companyId, ['cases:read', 'cases:write']);
  const testKey = await accounts.createKey(company.companyId, ['cases:read', 'cases:write'], undefined, 'test');
  return { created: true, companyId: company.companyId, apiKey: key.apiKey, testApiKey: testKey.apiKey };
}
