import type { VerifyDebtorDeps } from '../cases/verification/verify-debtor.js';
import { config, registryConfig, type AppConfig, type RegistryConfig } from '../runtime/config.js';
import { documentClient } from './dynamodb/dynamo-client.js';
import { CompaniesHouseRegistry } from './companies-house/companies-house-registry.js';
import { RefreshedKeyRegistry } from './companies-house/refreshed-key-registry.js';
import { DynamoRegistryProfileCache } from './dynamodb/registry-profile-cache.js';
import { DynamoRegistryRateLimiter } from './dynamodb/registry-rate-limiter.js';
import { registryApiKeyOnce, type RegistryKeyConfig } from './secrets/registry-api-key.js';
import type { CaseVerificationDeps } from '../cases/verification/verify-case-debtor.js';
import { SqsVerificationRetries, sqsClient } from './sqs/verification-retry-queue.js';
import { caseChangeAdapters } from './production-adapters.js';

/**
 * The composition root of the debtor verification worker (functions/verify-debtors.ts): apart
 * from production-adapters.ts so that no API function's bundle carries the registry client, the
 * verifier's SQS queue or their schemas (each would load at every cold start).
 */

/**
 * The debtor verifier's registry side (verifyDebtor's deps): Companies House over HTTP with the key
 * from Secrets Manager (read once per process, again after a 401), and the profile cache and rate
 * limiter shared by every worker through the table. Build it once per process: the limiter keeps
 * the window's state as it last saw it, which spares requests (registry-rate-limiter.ts).
 */
export function registryVerificationAdapters(
  cfg: AppConfig = config(),
  registry: RegistryConfig & Pick<RegistryKeyConfig, 'secretsEndpoint'> = registryConfig(),
): Pick<VerifyDebtorDeps, 'registry' | 'cache' | 'limiter'> {
  const client = documentClient(cfg);
  const apiKey = registryApiKeyOnce({ region: cfg.region, ...registry });
  return {
    registry: new RefreshedKeyRegistry(new CompaniesHouseRegistry({ baseUrl: registry.baseUrl, apiKey: apiKey.get }), apiKey),
    cache: new DynamoRegistryProfileCache(client, cfg.tableName),
    limiter: new DynamoRegistryRateLimiter(client, cfg.tableName, { config: registry.rateLimit }),
  };
}

/**
 * The verification worker (functions/verify-debtors.ts): the case change store, the live registry
 * with its shared cache and limiter (registryVerificationAdapters), and the retry queue.
 */
export function verificationAdapters(cfg: AppConfig = config(), registry: RegistryConfig = registryConfig()): CaseVerificationDeps {
  if (cfg.verificationRetryQueueUrl === undefined)
    throw new Error('Invalid configuration: VERIFICATION_RETRY_QUEUE_URL is required by the verification worker');
  const now = () => new Date();
  return {
    changes: { ...caseChangeAdapters(cfg).changes, now },
    verifier: registryVerificationAdapters(cfg, registry),
    retries: new SqsVerificationRetries(sqsClient(cfg), cfg.verificationRetryQueueUrl, now),
  };
}
