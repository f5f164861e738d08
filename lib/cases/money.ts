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

/**
 * Pence for a JSON number with at most two decimals, from its decimal digits (the shortest
 * round-trip form JavaScript prints, which is what the sender wrote for up to 15 significant
 * digits), never from `amount * 100` in binary floating point. Undefined for a negative, non-finite
 * or finer-than-a-penny number, or one too large to hold as a safe integer of pence.
 */
export function exactPence(amount: number): number | undefined {
  if (!Number.isFinite(amount) || amount < 0) return undefined;
  const text = String(amount);
  const match = /^(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(text);
  if (!match) return undefined;
  const digits = `${match[1]}${match[2] ?? ''}`;
  // The position of the decimal point among `digits`, counted from the left, after the exponent.
  const point = match[1]!.length + Number(match[3] ?? '0');
  const fraction = digits.length - point;
  if (fraction > 2 && /[^0]/.test(digits.slice(point + 2))) return undefined;
  const whole = point <= 0 ? '0' : digits.slice(0, point).padEnd(point, '0');
  const cents = (point < 0 ? '0'.repeat(-point) + digits : digits.slice(Math.max(point, 0))).padEnd(2, '0').slice(0, 2);
  const pence = BigInt(whole) * 100n + BigInt(cents);
  return pence <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(pence) : undefined;
}
