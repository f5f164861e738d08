import type { CompanyRegistry, RegistryAnswer } from '../../cases/verification/ports.js';
import type { RegistryApiKey } from '../secrets/registry-api-key.js';
import { CompaniesHouseError } from './companies-house-registry.js';

/**
 * The registry with a key that may have been rotated: a look-up refused with 401 has the key read
 * again from its secret (once for all concurrent refusals) and is asked once more. A key refused
 * again is a misconfiguration: the CompaniesHouseError goes to the worker's failure handling.
 * The repeated request has no permit of its own: it happens only after a key rotation (a few times
 * a year), and the limit's margin under the registry's 600 per 5 minutes (500 by default) absorbs it.
 */
export class RefreshedKeyRegistry implements CompanyRegistry {
  constructor(
    private readonly registry: CompanyRegistry,
    private readonly key: RegistryApiKey,
  ) {}

  async lookup(companyNumber: string): Promise<RegistryAnswer> {
    const used = await this.key.get();
    try {
      return await this.registry.lookup(companyNumber);
    } catch (error) {
      if (!(error instanceof CompaniesHouseError && error.status === 401)) throw error;
      await this.key.refresh(used);
      return this.registry.lookup(companyNumber);
    }
  }
}
