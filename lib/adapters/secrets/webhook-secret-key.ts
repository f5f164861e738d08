import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { Deadline } from '../../deadline.js';
import type { AppConfig } from '../../runtime/config.js';
import { createHttpHandler } from '../dynamodb/dynamo-client.js';
import { withRetries } from '../retry.js';
import { SecretBox } from '../webhooks/secret-box.js';

type WebhookKeyConfig = Pick<AppConfig, 'region' | 'webhookSecretKey' | 'webhookSecretKeyArn'>;

/**
 * The key-encryption key of webhook endpoint secrets (secret-box.ts): `WEBHOOK_SECRET_KEY` (at least
 * 32 characters) when set (npm start and the tests generate one), else the Secrets Manager secret
 * named by `WEBHOOK_SECRET_KEY_ARN` (the stack; generated there), fetched once
 * per process as the list cursors' key is (cursor-secret.ts). Only the functions that create,
 * rotate or deliver with secrets are given either.
 */
export async function readWebhookSecretKey(cfg: WebhookKeyConfig, client?: SecretsManagerClient, deadline?: Deadline): Promise<Uint8Array> {
  if (cfg.webhookSecretKey !== undefined) return Buffer.from(cfg.webhookSecretKey, 'utf8');
  if (cfg.webhookSecretKeyArn === undefined)
    throw new Error('Invalid configuration: WEBHOOK_SECRET_KEY or WEBHOOK_SECRET_KEY_ARN is required to seal webhook secrets');
  const secrets = client ?? new SecretsManagerClient({ region: cfg.region, requestHandler: createHttpHandler(), maxAttempts: 1 });
  try {
    const command = new GetSecretValueCommand({ SecretId: cfg.webhookSecretKeyArn });
    const out = await withRetries((options) => secrets.send(command, options), deadline);
    if (typeof out.SecretString !== 'string') throw new Error('the webhook secret key holds no SecretString');
    return Buffer.from(out.SecretString, 'utf8');
  } finally {
    if (!client) secrets.destroy();
  }
}

/** A SecretBox built on first use and kept for the process; a failure is not kept (the next request tries again). */
export function secretBoxOnce(cfg: WebhookKeyConfig): (deadline?: Deadline) => Promise<SecretBox> {
  let pending: Promise<SecretBox> | undefined;
  return (deadline) => {
    pending ??= readWebhookSecretKey(cfg, undefined, deadline)
      .then((key) => new SecretBox(key))
      .catch((error: unknown) => {
        pending = undefined;
        throw error;
      });
    return pending;
  };
}
