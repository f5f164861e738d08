import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { CompanyRegistry, RegistryAnswer } from '../../cases/verification/ports.js';
import type { AppConfig } from '../../runtime/config.js';
import { createHttpHandler } from '../dynamodb/dynamo-client.js';
import { withRetries } from '../retry.js';
import { CompaniesHouseError, CompaniesHouseRegistry } from './companies-house-registry.js';

type KeyConfig = Pick<AppConfig, 'region' | 'companiesHouseApiKey' | 'companiesHouseApiKeyArn' | 'companiesHouseBaseUrl'>;

/**
 * The Companies House API key: `COMPANIES_HOUSE_API_KEY` when set (`npm start`: the stand-in's
 * key), else the Secrets Manager secret `COMPANIES_HOUSE_API_KEY_ARN` (the stack), read once per
 * process and kept. `forget()` drops the kept key, so the next look-up reads the secret again:
 * after a rotation the old key is refused (401) and the worker picks the new one up without a
 * cold start. A failed read is not kept either. The key never reaches a log.
 */
export class RegistryKey {
  private pending: Promise<string> | undefined;

  constructor(
    private readonly cfg: KeyConfig,
    private readonly secrets?: SecretsManagerClient,
  ) {}

  get(): Promise<string> {
    this.pending ??= this.read().catch((error: unknown) => {
      this.pending = undefined;
      throw error;
    });
    return this.pending;
  }

  forget(): void {
    this.pending = undefined;
  }

  private async read(): Promise<string> {
    if (this.cfg.companiesHouseApiKey !== undefined) return this.cfg.companiesHouseApiKey;
    if (this.cfg.companiesHouseApiKeyArn === undefined)
      throw new Error(
        'Invalid configuration: COMPANIES_HOUSE_API_KEY or COMPANIES_HOUSE_API_KEY_ARN is required by the verification worker',
      );
    const client =
      this.secrets ?? new SecretsManagerClient({ region: this.cfg.region, requestHandler: createHttpHandler(), maxAttempts: 1 });
    try {
      const command = new GetSecretValueCommand({ SecretId: this.cfg.companiesHouseApiKeyArn });
      const out = await withRetries((options) => client.send(command, options));
      const key = out.SecretString?.trim();
      if (!key) throw new Error('the Companies House key secret holds no SecretString');
      return key;
    } finally {
      if (!this.secrets) client.destroy();
    }
  }
}

/**
 * A registry whose refused key (401) is read again from its source once before the refusal is
 * passed on: the secret may have been rotated since this process read it.
 */
export class KeyRefreshingRegistry implements CompanyRegistry {
  constructor(
    private readonly registry: CompanyRegistry,
    private readonly key: Pick<RegistryKey, 'forget'>,
  ) {}

  async lookup(companyNumber: string): Promise<RegistryAnswer> {
    try {
      return await this.registry.lookup(companyNumber);
    } catch (error) {
      if (!(error instanceof CompaniesHouseError) || error.status !== 401) throw error;
      this.key.forget();
      return this.registry.lookup(companyNumber);
    }
  }
}

/** The live registry of the worker: Companies House (or the stand-in `COMPANIES_HOUSE_BASE_URL` names), keyed from config. */
export function companiesHouseRegistry(cfg: KeyConfig, secrets?: SecretsManagerClient): CompanyRegistry {
  const key = new RegistryKey(cfg, secrets);
  const registry = new CompaniesHouseRegistry({ baseUrl: cfg.companiesHouseBaseUrl, apiKey: () => key.get() });
  return new KeyRefreshingRegistry(registry, key);
}
