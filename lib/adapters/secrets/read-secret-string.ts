import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { Deadline } from '../../deadline.js';
import { createHttpHandler } from '../dynamodb/dynamo-client.js';
import { withRetries } from '../retry.js';

/**
 * The SecretString of a Secrets Manager secret (`what` names it in the error when it has none).
 * Retries are the retry layer's, as for every other storage call (lib/adapters/retry.ts); the client is
 * destroyed after the read. The value never reaches a log or an error message.
 */
export async function readSecretString(source: { region: string; secretId: string; what: string }, deadline?: Deadline): Promise<string> {
  const secrets = new SecretsManagerClient({ region: source.region, requestHandler: createHttpHandler(), maxAttempts: 1 });
  try {
    const command = new GetSecretValueCommand({ SecretId: source.secretId });
    const out = await withRetries((options) => secrets.send(command, options), deadline);
    if (typeof out.SecretString !== 'string') throw new Error(`${source.what} holds no SecretString`);
    return out.SecretString;
  } finally {
    secrets.destroy();
  }
}

/**
 * Key material from the environment's value when set (locally: npm start and the tests), else from
 * the Secrets Manager secret its ARN names (the stack). `names` says which variables, for the
 * error when neither is set, and what the secret is.
 */
export async function keyMaterial(
  source: { region: string; value: string | undefined; arn: string | undefined },
  names: { required: string; what: string },
  deadline?: Deadline,
): Promise<Uint8Array> {
  if (source.value !== undefined) return Buffer.from(source.value, 'utf8');
  if (source.arn === undefined) throw new Error(`Invalid configuration: ${names.required}`);
  return Buffer.from(await readSecretString({ region: source.region, secretId: source.arn, what: names.what }, deadline), 'utf8');
}

/**
 * A value built from a secret on first use, within the first request's deadline, and reused by
 * every later invocation of the process. A failure (the read, or a secret the builder refuses) is
 * not kept: the next request tries again rather than failing until the next cold start.
 */
export function builtOnce<T>(build: (deadline?: Deadline) => Promise<T>): (deadline?: Deadline) => Promise<T> {
  let pending: Promise<T> | undefined;
  return (deadline) => {
    pending ??= build(deadline).catch((error: unknown) => {
      pending = undefined;
      throw error;
    });
    return pending;
  };
}
