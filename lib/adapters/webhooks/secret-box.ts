import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Envelope encryption of webhook endpoint secrets at rest (AES-256-GCM twice): each sealing makes
 * a fresh 256-bit data key, encrypts the plaintext with it, and stores the data key encrypted
 * ("wrapped") under the key-encryption key derived from key material in Secrets Manager (webhook-secret-key.ts). The
 * item's own key is the additional authenticated data of both layers, so a sealed value copied to
 * another endpoint (or another company's, or the other mode's) does not open.
 *
 * Why not KMS: a KMS Decrypt per delivery attempt would put KMS's request quota and latency on the
 * delivery path; the key-encryption key is fetched once per process, like the list cursors' key,
 * and re-wrapping the data keys is how it would be rotated. The secrets never reach a log.
 */
export const SECRET_BOX_VERSION = 1;
export const KEY_BYTES = 32;
/** At least this much key material (Secrets Manager generates 64 characters). */
export const MIN_KEY_MATERIAL_BYTES = 32;
const IV_BYTES = 12;

export interface SealedValue {
  /** Format version, so a later scheme can be told apart. */
  v: number;
  /** The data key, wrapped: iv + tag + ciphertext, base64. */
  wrappedKey: string;
  /** The plaintext under the data key: iv + tag + ciphertext, base64. */
  ciphertext: string;
}

function encrypt(key: Buffer, plaintext: Buffer, aad: Buffer): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(aad);
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
}

function decrypt(key: Buffer, sealed: string, aad: Buffer): Buffer {
  const raw = Buffer.from(sealed, 'base64');
  const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES));
  decipher.setAAD(aad);
  decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + 16));
  return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + 16)), decipher.final()]);
}

export class SecretBox {
  private readonly kek: Buffer;

  /** The key-encryption key is derived from the key material (HKDF-SHA256), as the list cursors' key is from theirs. */
  constructor(keyMaterial: Uint8Array) {
    if (keyMaterial.length < MIN_KEY_MATERIAL_BYTES)
      throw new Error(`the webhook secret key must be at least ${MIN_KEY_MATERIAL_BYTES} bytes`);
    this.kek = Buffer.from(hkdfSync('sha256', keyMaterial, Buffer.alloc(0), 'partner-case-api webhook endpoint secrets v1', KEY_BYTES));
  }

  seal(plaintext: string, context: string): SealedValue {
    const aad = Buffer.from(context, 'utf8');
    const dataKey = randomBytes(KEY_BYTES);
    try {
      return {
        v: SECRET_BOX_VERSION,
        wrappedKey: encrypt(this.kek, dataKey, aad),
        ciphertext: encrypt(dataKey, Buffer.from(plaintext, 'utf8'), aad),
      };
    } finally {
      dataKey.fill(0);
    }
  }

  /** Throws when the value was altered, sealed under another key, or sealed for another context. */
  open(sealed: SealedValue, context: string): string {
    if (sealed.v !== SECRET_BOX_VERSION) throw new Error(`unknown sealed value version ${String(sealed.v)}`);
    const aad = Buffer.from(context, 'utf8');
    const dataKey = decrypt(this.kek, sealed.wrappedKey, aad);
    try {
      return decrypt(dataKey, sealed.ciphertext, aad).toString('utf8');
    } finally {
      dataKey.fill(0);
    }
  }
}
