/**
 * principalAmount arrives as a JSON number of pounds and is held as integer pence. A number with
 * more than two decimal places is refused rather than rounded: the amount is a legal claim.
 */
export const MAX_PRINCIPAL_PENCE = 1_000_000; // 10,000.00 GBP

/**
 * Pence for a JSON number with at most two decimals; undefined only for a real fraction finer
 * than a penny (or a non-finite number). Uses the shortest round-trip decimal form of the number,
 * which is what the partner wrote for any value with up to 15 significant digits (so 0.1 + 0.2
 * style binary noise never counts as a decimal). A whole number too large to hold in pence (1e21)
 * is returned as it is and fails `amountInRange`: it is out of range, not badly formatted.
 */
export function toPence(amount: number): number | undefined {
  if (!Number.isFinite(amount)) return undefined;
  const text = String(Math.abs(amount));
  let decimals: number;
  if (text.includes('e')) {
    const [mantissa = '', exponent = '0'] = text.split('e');
    const fraction = mantissa.split('.')[1]?.length ?? 0;
    decimals = Math.max(0, fraction - Number(exponent));
  } else {
    decimals = text.split('.')[1]?.length ?? 0;
  }
  if (decimals > 2) return undefined;
  return Math.round(amount * 100);
}

export function amountInRange(pence: number): boolean {
  return Number.isSafeInteger(pence) && pence > 0 && pence <= MAX_PRINCIPAL_PENCE;
}

/** Integer pence as the API shows money: a decimal string with two places (`125050` → `"1250.50"`). */
export function formatPence(pence: number): string {
  const sign = pence < 0 ? '-' : '';
  const abs = Math.abs(pence);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}
