/**
 * Human-readable case references: `PC-` + a sequence number written in an alphabet without the
 * characters people confuse when reading aloud or by eye (0/O, 1/I/L, U/V). Six symbols give
 * 729 million references in 10 characters (`PC-22C-4XH`); beyond that they grow by one symbol,
 * staying within 16 characters for any realistic volume. Consecutive cases get consecutive
 * references because a batch reserves its block with one atomic counter update.
 */
export const REFERENCE_ALPHABET = '23456789ABCDEFGHJKMNPQRSTVWXYZ';
const BASE = REFERENCE_ALPHABET.length;
const MIN_SYMBOLS = 6;
export const REFERENCE_PATTERN = /^PC-[23456789ABCDEFGHJKMNPQRSTVWXYZ]{3,10}-[23456789ABCDEFGHJKMNPQRSTVWXYZ]{3}$/;

export function formatReference(sequence: number): string {
  if (!Number.isSafeInteger(sequence) || sequence < 0) throw new Error(`invalid reference sequence ${sequence}`);
  let n = sequence;
  let symbols = '';
  do {
    symbols = REFERENCE_ALPHABET[n % BASE] + symbols;
    n = Math.floor(n / BASE);
  } while (n > 0);
  symbols = symbols.padStart(MIN_SYMBOLS, REFERENCE_ALPHABET[0]);
  return `PC-${symbols.slice(0, -3)}-${symbols.slice(-3)}`;
}
