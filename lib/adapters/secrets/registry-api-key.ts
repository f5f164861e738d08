import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { AppConfig, RegistryConfig } from '../../runtime/config.js';
import { createHttpHandler } from '../dynamodb/dynamo-client.js';
import type { Deadline } from '../../deadline.js';
import { withRetries } from '../retry.js';

export type RegistryKeyConfig = Pick<AppConfig, 'region'> &
  Pick<RegistryConfig, 'apiKey' | 'apiKeySecret'> & {
    /** Only tests: a Secrets Manager stand-in's URL. */
    secretsEndpoint?: string;
  };

/**
 * The Companies House API key: `COMPANIES_HOUSE_API_KEY` when set (locally, the stand-in's key),
 * else the SecretString of the Secrets Manager secret `COMPANIES_HOUSE_API_KEY_SECRET` (name or
 * ARN; the stack sets it), the key alone, surrounding whitespace ignored. The value never reaches
 * a log or an error message. docs/deploy.md says how to create and rotate it.
 */
export async function readRegistryApiKey(cfg: RegistryKeyConfig, client?: SecretsManagerClient, deadline?: Deadline): Promise<string> {
  if (cfg.apiKey !== undefined) return cfg.apiKey;
  if (cfg.apiKeySecret === undefined)
    throw new Error('Invalid configuration: COMPANIES_HOUSE_API_KEY or COMPANIES_HOUSE_API_KEY_SECRET is required by the verifier');
  // Retries are the retry layer's, as for every other storage call (lib/adapters/retry.ts).
  const secrets =
    client ??
    new SecretsManagerClient({
      region: cfg.region,
      requestHandler: createHttpHandler(),
      maxAttempts: 1,
      ...(cfg.secretsEndpoint ? { endpoint: cfg.secretsEndpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
    });
  try {
    const command = new GetSecretValueCommand({ SecretId: cfg.apiKeySecret });
    const out = await withRetries((options) => secrets.send(command, options), deadline);
    const key = typeof out.SecretString === 'string' ? out.SecretString.trim() : '';
    if (key === '') throw new Error('the Companies House API key secret holds no SecretString');
    return key;
  } finally {
    if (!client) secrets.destroy();
  }
}

/** The key as the registry adapter asks for it, read once per process and again when the registry refuses it. */
export interface RegistryApiKey {
  /** The key read at cold start (or at the last refresh); the first call reads it. */
  get(): Promise<string>;
  /**
   * The registry refused `used`: read the secret again, unless someone already did since `used`
   * was handed out. Concurrent refusals of one key share one read.
   */
  refresh(used: string): Promise<void>;
}

/**
 * Read once per cold start, and again after a 401 (a rotated key: docs/deploy.md). A failed read
 * is not kept: the next look-up tries again rather than failing until the next cold start.
 */
export function registryApiKeyOnce(
  cfg: RegistryKeyConfig,
  read: (cfg: RegistryKeyConfig) => Promise<string> = (c) => readRegistryApiKey(c),
): RegistryApiKey {
  let pending: Promise<string> | undefined;
  const load = () => {
    const attempt = read(cfg).catch((error: unknown) => {
      if (pending === attempt) pending = undefined;
      throw error;
    });
    pending = attempt;
    return attempt;
  };
  return {
    get: () => pending ?? load(),
    async refresh(used) {
      const current = await (pending ?? load()).catch(() => undefined);
      if (current === used) await load().catch(() => undefined);
    },
  };
}
