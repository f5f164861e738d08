import type { Deadline } from '../../deadline.js';
import type { AppConfig } from '../../runtime/config.js';
import { SecretBox } from '../webhooks/secret-box.js';
import { builtOnce, keyMaterial } from './read-secret-string.js';

/**
 * The SecretBox of webhook endpoint secrets, its key-encryption key `WEBHOOK_SECRET_KEY` (at least
 * 32 characters) when set (npm start and the tests generate one), else the Secrets Manager secret
 * named by `WEBHOOK_SECRET_KEY_ARN` (the stack; generated there): built on first use and kept for
 * the process, as the list cursors' sealer is (cursor-secret.ts). Only the functions that create,
 * rotate or deliver with secrets are given either.
 */
export function secretBoxOnce(
  cfg: Pick<AppConfig, 'region' | 'webhookSecretKey' | 'webhookSecretKeyArn'>,
): (deadline?: Deadline) => Promise<SecretBox> {
  const source = { region: cfg.region, value: cfg.webhookSecretKey, arn: cfg.webhookSecretKeyArn };
  const names = {
    required: 'WEBHOOK_SECRET_KEY or WEBHOOK_SECRET_KEY_ARN is required to seal webhook secrets',
    what: 'the webhook secret key',
  };
  return builtOnce(async (deadline) => new SecretBox(await keyMaterial(source, names, deadline)));
}
