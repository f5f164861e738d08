import { createHash, timingSafeEqual } from 'node:crypto';
import type { Mode } from '../mode.js';
import { BASE62, randomBase62 } from '../random-id.js';

/**
 * API key format (product rules): `pca_<keyId>_<secret><checksum>` (live) or
 * `pca_test_<keyId>_<secret><checksum>` (test mode), all in [A-Za-z0-9_] so one double-click
 * selects it and a secret scanner can recognise a real key, and its mode, offline.
 *
 * - `pca_`     self-identifying prefix ("partner case API"); `pca_test_` for a test key. A key id
 *              is base62, so it never reads as `test_`: the two prefixes cannot be confused.
 * - keyId      16 base62 characters (~95 bits), the lookup key; not secret
 * - secret     43 base62 characters (> 256 bits of entropy)
 * - checksum   6 base62 characters: CRC-32 of everything before it (the mode prefix included), so
 *              a mistyped or truncated key, or one whose mode was edited, is refused without a
 *              database read
 *
 * Only SHA-256(secret) is stored. A 256-bit random secret needs no slow hash: it cannot be brute
 * forced, and a fast hash keeps authentication off the latency budget.
 */
export const KEY_PREFIX = 'pca_';
/** The prefix of each mode's keys. */
export const KEY_PREFIXES: Readonly<Record<Mode, string>> = { live: KEY_PREFIX, test: `${KEY_PREFIX}test_` };
const KEY_ID_LENGTH = 16;
const SECRET_LENGTH = 43;
const CHECKSUM_LENGTH = 6;
const KEY_PATTERN = new RegExp(
  `^${KEY_PREFIX}(test_)?([0-9A-Za-z]{${KEY_ID_LENGTH}})_([0-9A-Za-z]{${SECRET_LENGTH}})([0-9A-Za-z]{${CHECKSUM_LENGTH}})$`,
);
export const KEY_ID_PATTERN = new RegExp(`^[0-9A-Za-z]{${KEY_ID_LENGTH}}$`);
/** The length of a live key; a test key is `test_`.length longer. */
export const API_KEY_LENGTH = KEY_PREFIX.length + KEY_ID_LENGTH + 1 + SECRET_LENGTH + CHECKSUM_LENGTH;
const API_KEY_LENGTHS: Readonly<Record<Mode, number>> = {
  live: API_KEY_LENGTH,
  test: API_KEY_LENGTH + KEY_PREFIXES.test.length - KEY_PREFIX.length,
};

export interface ParsedApiKey {
  keyId: string;
  secret: string;
  /** From the prefix: authentication also requires the stored key to have this mode. */
  mode: Mode;
}

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

export function crc32(text: string): number {
  let crc = 0xffffffff;
  for (const byte of Buffer.from(text, 'utf8')) {
    crc = (CRC_TABLE[(crc ^ byte) & 0xff] as number) ^ (crc >>> 8);
  }
  return (crc ^ 0xffffffff) >>> 0;
}

function checksum(body: string): string {
  let value = crc32(body);
  let out = '';
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = BASE62[value % 62] + out;
    value = Math.floor(value / 62);
  }
  return out;
}

export function formatApiKey(keyId: string, secret: string, mode: Mode = 'live'): string {
  const body = `${KEY_PREFIXES[mode]}${keyId}_${secret}`;
  return body + checksum(body);
}

export function generateApiKey(mode: Mode = 'live'): { keyId: string; secret: string; apiKey: string; secretHash: string; mode: Mode } {
  const keyId = randomBase62(KEY_ID_LENGTH);
  const secret = randomBase62(SECRET_LENGTH);
  return { keyId, secret, apiKey: formatApiKey(keyId, secret, mode), secretHash: hashSecret(secret), mode };
}

/** Parses a presented key; undefined when it is malformed or its checksum fails. No I/O. */
export function parseApiKey(presented: string): ParsedApiKey | undefined {
  if (presented.length !== API_KEY_LENGTHS.live && presented.length !== API_KEY_LENGTHS.test) return undefined;
  const match = KEY_PATTERN.exec(presented);
  if (!match) return undefined;
  const [, test, keyId, secret, sum] = match as unknown as [string, string | undefined, string, string, string];
  const mode: Mode = test === undefined ? 'live' : 'test';
  if (checksum(`${KEY_PREFIXES[mode]}${keyId}_${secret}`) !== sum) return undefined;
  return { keyId, secret, mode };
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** Constant-time comparison of a presented secret with a stored hash. */
export function secretMatches(secret: string, storedHash: string): boolean {
  const presented = Buffer.from(hashSecret(secret), 'hex');
  const stored = Buffer.from(storedHash, 'hex');
  if (stored.length !== presented.length) {
    timingSafeEqual(presented, presented);
    return false;
  }
  return timingSafeEqual(presented, stored);
}
