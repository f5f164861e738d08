import { createHmac } from 'node:crypto';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import {
  generateEndpointSecret,
  isEndpointSecret,
  MIN_SECRET_BYTES,
  ROTATION_OVERLAP_MS,
  rotateSecrets,
  signatureHeaders,
  signingSecrets,
  type EndpointSecret,
} from '../../../lib/webhooks/signature.js';

const payload = JSON.stringify({ id: 'evt_1', type: 'case.updated', createdAt: '2025-03-01T10:00:00.000Z', data: { object: { id: 'c' } } });

describe('webhook signatures', () => {
  it('are verified by the Standard Webhooks library with the endpoint’s one secret', () => {
    const secret = generateEndpointSecret();
    const headers = signatureHeaders('evt_1', payload, new Date(), [secret]);
    expect(headers['webhook-id']).toBe('evt_1');
    expect(headers['webhook-signature'].split(' ')).toHaveLength(1);
    expect(new Webhook(secret).verify(payload, { ...headers })).toEqual(JSON.parse(payload));
  });

  it('carry one v1 entry per secret during a rotation, and each secret verifies alone', () => {
    const [newer, older] = [generateEndpointSecret(), generateEndpointSecret()];
    const headers = signatureHeaders('evt_2', payload, new Date(), [newer, older]);
    const entries = headers['webhook-signature'].split(' ');
    expect(entries).toHaveLength(2);
    for (const entry of entries) expect(entry).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(new Webhook(newer).verify(payload, { ...headers })).toEqual(JSON.parse(payload));
    expect(new Webhook(older).verify(payload, { ...headers })).toEqual(JSON.parse(payload));
  });

  it('are refused by the library for another secret, another body or another id', () => {
    const secret = generateEndpointSecret();
    const headers = signatureHeaders('evt_3', payload, new Date(), [secret]);
    expect(() => new Webhook(generateEndpointSecret()).verify(payload, { ...headers })).toThrow(WebhookVerificationError);
    expect(() => new Webhook(secret).verify(payload.replace('case.updated', 'case.created'), { ...headers })).toThrow(
      WebhookVerificationError,
    );
    expect(() => new Webhook(secret).verify(payload, { ...headers, 'webhook-id': 'evt_4' })).toThrow(WebhookVerificationError);
  });

  it('are the HMAC-SHA256 of "{id}.{timestamp}.{body}" the product rules describe, timestamped in the attempt’s seconds', () => {
    const secret = generateEndpointSecret();
    const at = new Date('2025-03-01T10:00:07.900Z');
    const headers = signatureHeaders('evt_5', payload, at, [secret]);
    expect(headers['webhook-timestamp']).toBe(String(Math.floor(at.getTime() / 1000)));
    const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
    const expected = createHmac('sha256', key).update(`evt_5.${headers['webhook-timestamp']}.${payload}`).digest('base64');
    expect(headers['webhook-signature']).toBe(`v1,${expected}`);
  });

  it('are refused by the library when the attempt is older than its tolerance (a replay)', () => {
    const secret = generateEndpointSecret();
    const headers = signatureHeaders('evt_6', payload, new Date(Date.now() - 10 * 60 * 1000), [secret]);
    expect(() => new Webhook(secret).verify(payload, { ...headers })).toThrow('Message timestamp too old');
  });
});

describe('endpoint secrets', () => {
  it(`are whsec_ and the base64 of at least ${MIN_SECRET_BYTES} random bytes, different every time`, () => {
    const secrets = new Set(Array.from({ length: 50 }, generateEndpointSecret));
    expect(secrets.size).toBe(50);
    for (const secret of secrets) {
      expect(isEndpointSecret(secret)).toBe(true);
      expect(Buffer.from(secret.slice(6), 'base64').length).toBeGreaterThanOrEqual(MIN_SECRET_BYTES);
    }
  });

  it('are told apart from malformed or short ones', () => {
    expect(isEndpointSecret('whsec_' + Buffer.alloc(23, 1).toString('base64'))).toBe(false);
    expect(isEndpointSecret('whsec_' + Buffer.alloc(24, 1).toString('base64'))).toBe(true);
    expect(isEndpointSecret(Buffer.alloc(32, 1).toString('base64'))).toBe(false);
    expect(isEndpointSecret('whsec_not base64!')).toBe(false);
  });

  it('sign beside the new one for 24 hours after a rotation, and not after', () => {
    const created = new Date('2025-03-01T00:00:00.000Z');
    const first: EndpointSecret[] = [{ secret: 'whsec_first', createdAt: created.toISOString() }];
    const rotatedAt = new Date('2025-03-02T12:00:00.000Z');
    const rotated = rotateSecrets(first, 'whsec_second', rotatedAt);
    expect(signingSecrets(rotated, rotatedAt)).toEqual(['whsec_second', 'whsec_first']);
    expect(signingSecrets(rotated, new Date(rotatedAt.getTime() + ROTATION_OVERLAP_MS - 1))).toEqual(['whsec_second', 'whsec_first']);
    expect(signingSecrets(rotated, new Date(rotatedAt.getTime() + ROTATION_OVERLAP_MS))).toEqual(['whsec_second']);
  });

  it('rotated twice within a day sign three ways, and a later rotation drops what has expired', () => {
    const t0 = new Date('2025-03-01T00:00:00.000Z');
    const at = (hours: number) => new Date(t0.getTime() + hours * 3600_000);
    let secrets: EndpointSecret[] = [{ secret: 'whsec_a', createdAt: t0.toISOString() }];
    secrets = rotateSecrets(secrets, 'whsec_b', at(1));
    secrets = rotateSecrets(secrets, 'whsec_c', at(2));
    expect(signingSecrets(secrets, at(3))).toEqual(['whsec_c', 'whsec_b', 'whsec_a']);
    secrets = rotateSecrets(secrets, 'whsec_d', at(25.5));
    expect(secrets.map((s) => s.secret)).toEqual(['whsec_d', 'whsec_c', 'whsec_b']);
    expect(signingSecrets(secrets, at(25.5))).toEqual(['whsec_d', 'whsec_c', 'whsec_b']);
    expect(signingSecrets(secrets, at(26))).toEqual(['whsec_d', 'whsec_c']);
  });
});
