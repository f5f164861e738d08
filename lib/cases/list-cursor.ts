import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { Mode } from '../mode.js';
import * as z from 'zod/mini';
import { InvalidCursorError } from '../errors.js';
import type { ListPosition } from './ports.js';

/**
 * List cursors: AES-256-GCM over the position, the company and the filters a page was listed
 * with, and the time it was issued. Authenticated encryption makes a cursor both opaque (a
 * partner cannot read storage positions or build one) and tamper-proof (any changed byte fails
 * the tag). The key is derived from the configured secret, so the secret can be any long random
 * string; rotating it invalidates every outstanding cursor, which lives 24 hours at most.
 */
export const CURSOR_LIFETIME_MS = 24 * 60 * 60 * 1000;

/** A secret shorter than this is refused: the key must not be guessable. */
export const MIN_CURSOR_SECRET_BYTES = 32;

/** Far longer than any cursor this module issues; anything longer is not one of ours. */
export const MAX_CURSOR_LENGTH = 1024;

/** A cursor is base64url text: anything else is not one of ours. */
export const CURSOR_PATTERN = /^[A-Za-z0-9_-]+$/;

const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_INFO = 'partner-case-api list cursor v1';

/** What a cursor binds: the walk's position, for whom and for which filters it was issued. */
export interface CursorContent {
  companyId: string;
  /** The caller's mode: a cursor of the other mode is refused like another company's. */
  mode: Mode;
  /** The canonical form of the filters (`filterBinding` for cases, `eventFilterBinding` for events: never equal to each other). */
  filters: string;
  position: ListPosition;
}

// zod's mini API: this module is in every bundle that builds the table adapters (get-case's
// included), and a schema built at load with classic zod costs a cold start its first classic
// schemas (docs/performance.md, section 4).
const payloadSchema = z.strictObject({
  c: z.string(),
  /** Set on test-mode cursors only; absent (cursors sealed before test mode too) means live. */
  m: z.optional(z.literal('test')),
  f: z.string(),
  a: z.string(),
  d: z.array(z.int().check(z.minimum(0))),
  t: z.int(),
});

export class CursorSealer {
  private readonly key: Buffer;

  constructor(secret: Uint8Array) {
    if (secret.length < MIN_CURSOR_SECRET_BYTES) throw new Error(`the cursor secret must be at least ${MIN_CURSOR_SECRET_BYTES} bytes`);
    this.key = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), KEY_INFO, 32));
  }

  seal(content: CursorContent, now: Date): string {
    const payload = JSON.stringify({
      c: content.companyId,
      ...(content.mode === 'test' ? { m: 'test' } : {}),
      f: content.filters,
      a: content.position.after,
      d: content.position.doneShards,
      t: now.getTime(),
    });
    const iv = randomBytes(IV_BYTES);
    const header = Buffer.from([VERSION]);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(header);
    const body = Buffer.concat([cipher.update(payload, 'utf8'), cipher.final()]);
    return Buffer.concat([header, iv, body, cipher.getAuthTag()]).toString('base64url');
  }

  /**
   * The position a cursor carries, once it is proven ours, unexpired, and issued to this company
   * for these filters; otherwise InvalidCursorError naming which of those failed.
   */
  open(token: string, expected: { companyId: string; mode: Mode; filters: string }, now: Date): ListPosition {
    const payload = this.decrypt(token);
    if (payload.c !== expected.companyId || (payload.m ?? 'live') !== expected.mode) throw new InvalidCursorError('foreign');
    const age = now.getTime() - payload.t;
    if (age > CURSOR_LIFETIME_MS) throw new InvalidCursorError('expired');
    if (payload.f !== expected.filters) throw new InvalidCursorError('other-filters');
    return { after: payload.a, doneShards: payload.d };
  }

  private decrypt(token: string): z.infer<typeof payloadSchema> {
    const unreadable = () => new InvalidCursorError('unreadable');
    if (token.length === 0 || token.length > MAX_CURSOR_LENGTH || !CURSOR_PATTERN.test(token)) throw unreadable();
    const bytes = Buffer.from(token, 'base64url');
    if (bytes.length <= 1 + IV_BYTES + TAG_BYTES || bytes[0] !== VERSION) throw unreadable();
    const header = bytes.subarray(0, 1);
    const iv = bytes.subarray(1, 1 + IV_BYTES);
    const body = bytes.subarray(1 + IV_BYTES, bytes.length - TAG_BYTES);
    const tag = bytes.subarray(bytes.length - TAG_BYTES);
    let text: string;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, iv, { authTagLength: TAG_BYTES });
      decipher.setAAD(header);
      decipher.setAuthTag(tag);
      text = Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
    } catch {
      throw unreadable();
    }
    // Authentic, so written by seal(); parsed strictly all the same.
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw unreadable();
    }
    const checked = payloadSchema.safeParse(parsed);
    if (!checked.success) throw unreadable();
    return checked.data;
  }
}
