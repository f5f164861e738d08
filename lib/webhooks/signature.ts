import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/**
 * Endpoint secrets and the Standard Webhooks signature headers (product rules "Webhooks"), made by
 * the `standardwebhooks` library itself, the one partners verify with, never by hand.
 *
 * A secret is `whsec_<base64 of SECRET_BYTES random bytes>`. An endpoint holds one current secret,
 * and after a rotation also the previous one for ROTATION_OVERLAP_MS: every delivery in that time
 * carries one `v1,` signature per secret, so a receiver still configured with the old secret keeps
 * verifying until it switches.
 */
export const SECRET_PREFIX = 'whsec_';
/** At least 24 (the product rules); 32 is what HMAC-SHA256 can use whole. */
export const SECRET_BYTES = 32;
export const MIN_SECRET_BYTES = 24;
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

export function generateEndpointSecret(): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}

/** Whether a value is a well-formed endpoint secret (standard base64 of at least MIN_SECRET_BYTES bytes). */
export function isEndpointSecret(value: string): boolean {
  if (!value.startsWith(SECRET_PREFIX)) return false;
  const body = value.slice(SECRET_PREFIX.length);
  if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(body)) return false;
  return Buffer.from(body, 'base64').length >= MIN_SECRET_BYTES;
}

/** One secret of an endpoint; `retiredAt` is set when a rotation replaced it (ISO 8601). */
export interface EndpointSecret {
  secret: string;
  createdAt: string;
  retiredAt?: string;
}

/** The secrets that sign at `now`: the current one, and any retired less than ROTATION_OVERLAP_MS ago. Newest first. */
export function signingSecrets(secrets: readonly EndpointSecret[], now: Date): string[] {
  return secrets
    .filter((s) => s.retiredAt === undefined || Date.parse(s.retiredAt) + ROTATION_OVERLAP_MS > now.getTime())
    .sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt))
    .map((s) => s.secret);
}

/**
 * The endpoint's secrets after a rotation at `now`: the new secret current, the one it replaces
 * retired now (it signs for ROTATION_OVERLAP_MS more), and secrets whose overlap has ended dropped.
 */
export function rotateSecrets(secrets: readonly EndpointSecret[], newSecret: string, now: Date): EndpointSecret[] {
  const at = now.toISOString();
  const kept = secrets
    .map((s) => (s.retiredAt === undefined ? { ...s, retiredAt: at } : s))
    .filter((s) => Date.parse(s.retiredAt ?? at) + ROTATION_OVERLAP_MS > now.getTime());
  return [{ secret: newSecret, createdAt: at }, ...kept];
}

export interface WebhookSignatureHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/**
 * The three Standard Webhooks headers of one attempt: `webhook-id` is the event id (the same on
 * every attempt, so receivers deduplicate on it), `webhook-timestamp` the attempt's Unix seconds,
 * and `webhook-signature` one space-separated `v1,<base64>` entry per signing secret.
 */
export function signatureHeaders(eventId: string, payload: string, at: Date, secrets: readonly string[]): WebhookSignatureHeaders {
  if (secrets.length === 0) throw new Error('a webhook is signed with at least one secret');
  return {
    'webhook-id': eventId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': secrets.map((secret) => new Webhook(secret).sign(eventId, at, payload)).join(' '),
  };
}
