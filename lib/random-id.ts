import { randomFillSync } from 'node:crypto';

/** Identifiers (case ids, company ids, key ids, file ids, secrets) are base62: one double-click selects them. */
export const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * Random bytes are drawn from the CSPRNG 4 KiB at a time and each byte is used once: a 100-case
 * batch needs two 22-character ids per case, and asking the CSPRNG for 44 bytes 200 times cost
 * several per cent of the batch's CPU (bench section 2c). The same technique as crypto.randomUUID's
 * own cache; the bytes are as random, only fetched in bulk.
 */
const pool = Buffer.alloc(4096);
let offset = pool.length;

function randomByte(): number {
  if (offset === pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const byte = pool[offset]!;
  // Spent bytes do not stay in memory (secrets are drawn from here too).
  pool[offset++] = 0;
  return byte;
}

/** Uniform random base62 string (rejection sampling: no modulo bias). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    const byte = randomByte();
    if (byte < 248) out += BASE62[byte % 62];
  }
  return out;
}
