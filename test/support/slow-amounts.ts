import { REFERENCE_RATES_BASIS_POINTS } from '../../lib/cases/reference-rates.js';

/**
 * A second, deliberately naive reading of the product rules' amounts, to hold the fast module
 * (lib/cases/compute-amounts.ts) to: it walks every day from interestFrom to asOf, works out the
 * principal unpaid on that day from scratch, adds that day's interest as an exact fraction, and
 * rounds the sum at the end. It shares no code with the fast module (only the rate table, which
 * is data), and takes money as the API shows it (decimal strings), so formatting is checked too.
 */

class Fraction {
  readonly n: bigint;
  readonly d: bigint;

  constructor(n: bigint, d: bigint = 1n) {
    if (d === 0n) throw new Error('zero denominator');
    const sign = d < 0n ? -1n : 1n;
    const g = gcd(n < 0n ? -n : n, d < 0n ? -d : d) || 1n;
    this.n = (sign * n) / g;
    this.d = (sign * d) / g;
  }

  plus(other: Fraction): Fraction {
    return new Fraction(this.n * other.d + other.n * this.d, this.d * other.d);
  }

  times(other: Fraction): Fraction {
    return new Fraction(this.n * other.n, this.d * other.d);
  }

  /** Rounded half up to a whole number (the fraction is never negative here). */
  roundHalfUp(): bigint {
    const whole = this.n / this.d;
    const remainder = this.n - whole * this.d;
    return remainder * 2n >= this.d ? whole + 1n : whole;
  }
}

function gcd(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
}

/** "1250.50" → 125050n (exactly two decimals, as the API writes money). */
function pence(decimal: string): bigint {
  const match = /^(\d+)\.(\d{2})$/.exec(decimal);
  if (!match) throw new Error(`not money: ${decimal}`);
  return BigInt(match[1]!) * 100n + BigInt(match[2]!);
}

function money(p: bigint): string {
  const text = p.toString().padStart(3, '0');
  return `${text.slice(0, -2)}.${text.slice(-2)}`;
}

function nextDay(date: string): string {
  const d = new Date(`${date}T12:00:00Z`);
  d.setUTCDate(d.getUTCDate() + 1);
  return d.toISOString().slice(0, 10);
}

const london = new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/London', year: 'numeric', month: '2-digit', day: '2-digit' });

function londonCalendarDate(dueDate: string): string {
  if (/^\d{4}-\d{2}-\d{2}$/.test(dueDate)) return dueDate;
  const [day, month, year] = london.format(new Date(dueDate)).split('/');
  return `${year}-${month}-${day}`;
}

export interface SlowCase {
  principalAmount: string;
  dueDate: string;
  claimStatutoryInterest: boolean;
  payments: { amount: string; paidAt: string }[];
  asOf: string;
}

export function slowAmounts(c: SlowCase) {
  const principal = pence(c.principalAmount);
  const interestFrom = nextDay(londonCalendarDate(c.dueDate));
  const paid = c.payments.reduce((sum, p) => sum + pence(p.amount), 0n);
  const halfYear = `${interestFrom.slice(0, 4)}-H${Number(interestFrom.slice(5, 7)) < 7 ? 1 : 2}`;
  const reference = REFERENCE_RATES_BASIS_POINTS[halfYear];
  let compensation = 0n;
  let ratePercent: Fraction | null = null;
  let interest: bigint | null = 0n;
  if (c.claimStatutoryInterest) {
    compensation = principal < 100000n ? 4000n : principal < 1000000n ? 7000n : 10000n;
    if (reference === undefined) {
      interest = null;
    } else {
      ratePercent = new Fraction(BigInt(reference), 100n).plus(new Fraction(8n));
      const perPennyPerDay = ratePercent.times(new Fraction(1n, 100n * 365n));
      let sum = new Fraction(0n);
      for (let day = interestFrom; day <= c.asOf; day = nextDay(day)) {
        const paidSoFar = c.payments.filter((p) => p.paidAt <= day).reduce((s, p) => s + pence(p.amount), 0n);
        const unpaid = principal > paidSoFar ? principal - paidSoFar : 0n;
        sum = sum.plus(new Fraction(unpaid).times(perPennyPerDay));
      }
      interest = sum.roundHalfUp();
    }
  }
  const claimed = principal + compensation + (interest ?? 0n);
  const rateText = ratePercent === null ? null : money(ratePercent.times(new Fraction(100n)).roundHalfUp());
  return {
    principal: money(principal),
    compensation: money(compensation),
    interestFrom,
    interestRate: rateText,
    interest: interest === null ? null : money(interest),
    claimed: money(claimed),
    paid: money(paid),
    outstanding: money(claimed > paid ? claimed - paid : 0n),
    asOf: c.asOf,
  };
}
