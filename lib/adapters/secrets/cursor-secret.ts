import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { CursorSealer } from '../../cases/list-cursor.js';
import type { AppConfig } from '../../runtime/config.js';
import { createHttpHandler } from '../dynamodb/dynamo-client.js';

type CursorConfig = Pick<AppConfig, 'region' | 'cursorSecret' | 'cursorSecretArn'>;

/**
 * The list cursors' key material: `CURSOR_SECRET` when set (locally), else the Secrets Manager
 * secret named by `CURSOR_SECRET_ARN` (the stack), fetched once and kept for the life of the
 * process. The value never reaches a log or a response.
 */
export async function readCursorSecret(cfg: CursorConfig, client?: SecretsManagerClient): Promise<Uint8Array> {
  if (cfg.cursorSecret !== undefined) return Buffer.from(cfg.cursorSecret, 'utf8');
  if (cfg.cursorSecretArn === undefined) throw new Error('Invalid configuration: CURSOR_SECRET or CURSOR_SECRET_ARN is required by the case list');
  const secrets = client ?? new SecretsManagerClient({ region: cfg.region, requestHandler: createHttpHandler(), maxAttempts: 3 });
  try {
    const out = await secrets.send(new GetSecretValueCommand({ SecretId: cfg.cursorSecretArn }));
    if (typeof out.SecretString !== 'string') throw new Error('the cursor secret holds no SecretString');
    return Buffer.from(out.SecretString, 'utf8');
  } finally {
    if (!client) secrets.destroy();
  }
}

/**
 * A CursorSealer built on first use and reused by every later invocation of the process. A failed
 * read is not kept: the next request tries again rather than failing until the next cold start.
 */
export function cursorSealerOnce(cfg: CursorConfig): () => Promise<CursorSealer> {
  let pending: Promise<CursorSealer> | undefined;
  return () => {
    pending ??= readCursorSecret(cfg).then(
      (secret) => new CursorSealer(secret),
      (error: unknown) => {
        pending = undefined;
        throw error;
      },
    );
    return pending;
  };
}
