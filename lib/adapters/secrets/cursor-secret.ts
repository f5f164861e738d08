import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { CursorSealer } from '../../cases/list-cursor.js';
import type { AppConfig } from '../../runtime/config.js';
import { createHttpHandler } from '../dynamodb/dynamo-client.js';
import type { Deadline } from '../../deadline.js';
import { withRetries } from '../retry.js';

type CursorConfig = Pick<AppConfig, 'region' | 'cursorSecret' | 'cursorSecretArn'>;

/**
 * The list cursors' key material: `CURSOR_SECRET` when set (locally), else the Secrets Manager
 * secret named by `CURSOR_SECRET_ARN` (the stack), fetched once and kept for the life of the
 * process. The value never reaches a log or a response.
 */
export async function readCursorSecret(cfg: CursorConfig, client?: SecretsManagerClient, deadline?: Deadline): Promise<Uint8Array> {
  if (cfg.cursorSecret !== undefined) return Buffer.from(cfg.cursorSecret, 'utf8');
  if (cfg.cursorSecretArn === undefined)
    throw new Error('Invalid configuration: CURSOR_SECRET or CURSOR_SECRET_ARN is required by the case list');
  // Retries are the retry layer's, as for every other storage call (lib/adapters/retry.ts).
  const secrets = client ?? new SecretsManagerClient({ region: cfg.region, requestHandler: createHttpHandler(), maxAttempts: 1 });
  try {
    const command = new GetSecretValueCommand({ SecretId: cfg.cursorSecretArn });
    const out = await withRetries((options) => secrets.send(command, options), deadline);
    if (typeof out.SecretString !== 'string') throw new Error('the cursor secret holds no SecretString');
    return Buffer.from(out.SecretString, 'utf8');
  } finally {
    if (!client) secrets.destroy();
  }
}

/**
 * A CursorSealer built on first use, within the first request's deadline, and reused by every
 * later invocation of the process. A failure (the read, or a secret the sealer refuses) is not
 * kept: the next request tries again rather than failing until the next cold start.
 */
export function cursorSealerOnce(cfg: CursorConfig): (deadline?: Deadline) => Promise<CursorSealer> {
  let pending: Promise<CursorSealer> | undefined;
  return (deadline) => {
    pending ??= readCursorSecret(cfg, undefined, deadline)
      .then((secret) => new CursorSealer(secret))
      .catch((error: unknown) => {
        pending = undefined;
        throw error;
      });
    return pending;
  };
}
