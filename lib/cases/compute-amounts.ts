import { parseCaseDate } from './dates.js';
import { formatPence } from './money.js';
import { referenceRateFor } from './reference-rates.js';

/**
 * What a case claims under the Late Payment of Commercial Debts (Interest) Act 1998, what was
 * paid and what is outstanding on a day (product rules, "Recovery and money"; docs/api.md,
 * "Amounts", has a worked example).
 *
 * Exact: money is integer pence, rates are integer basis points, and interest is one fraction
 * (pence-days × rate ÷ 3,650,000) in bigint, rounded once, half up. No binary floating point
 * touches a figure.
 *
 * Fast: interest is summed over the intervals in which unpaid principal is constant (between two
 * payment dates), not day by day, so the cost grows with the number of payments, not with the
 * age of the case.
 */

/** The statutory fixed sum (s.5A of the Act) by principal: below 1,000.00 → 40.00; below 10,000.00 → 70.00; else 100.00. */
function compensationPence(principalPence: number): number {
  if (principalPence < 100_000) return 4_000;
  if (principalPence < 1_000_000) return 7_000;
  return 10_000;
}

/** Statutory interest is the reference rate plus 8 percentage points (s.4 and the 2002 Order). */
const STATUTORY_MARGIN_BASIS_POINTS = 800;

/** pence-days × basis points ÷ (100 basis points a percent × 100 percent × 365 days a year): a leap year's day is still 1/365. */
const INTEREST_DENOMINATOR = 3_650_000n;

const DAY_MS = 86_400_000;

/** A payment as the computation needs it: how much, and the day it counts from. */
export interface PaymentFact {
  amountPence: number;
  /** `YYYY-MM-DD`; the payment already reduces unpaid principal on this day. */
  paidAt: string;
}

/** The facts of a case the amounts are computed from. */
export interface AmountFacts {
  principalPence: number;
  /** As stored on the case: `YYYY-MM-DD`, or a date-time that counts as its Europe/London date. */
  dueDate: string;
  claimStatutoryInterest: boolean;
  payments: readonly PaymentFact[];
  /** `YYYY-MM-DD`: the last day interest accrues for. */
  asOf: string;
}

/** The figures in integer pence (interest null when the half-year's reference rate is not known). */
export interface AmountsInPence {
  principal: number;
  compensation: number;
  interestFrom: string;
  /** Statutory rate in basis points (1275 is 12.75 % a year); null without a claim or without a reference rate. */
  interestRateBasisPoints: number | null;
  interest: number | null;
  claimed: number;
  paid: number;
  outstanding: number;
  asOf: string;
}

/** The figures as the API shows them: GBP decimal strings with two places, the rate as percent a year with two places. */
export interface CaseAmounts {
  principal: string;
  compensation: string;
  interestFrom: string;
  interestRate: string | null;
  interest: string | null;
  claimed: string;
  paid: string;
  outstanding: string;
  asOf: string;
}

function dayNumber(date: string): number {
  const parsed = parseCaseDate(date);
  if (parsed?.kind !== 'date') throw new RangeError(`not a YYYY-MM-DD date: ${date}`);
  return Date.UTC(Number(date.slice(0, 4)), Number(date.slice(5, 7)) - 1, Number(date.slice(8, 10))) / DAY_MS;
}

function dateOfDay(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10);
}

function requirePence(value: number, what: string): void {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${what} must be a whole number of pence ≥ 0, got ${value}`);
}

/** The day after dueDate's (Europe/London) date. */
function interestFromOf(dueDate: string): string {
  const parsed = parseCaseDate(dueDate);
  if (!parsed) throw new RangeError(`not a case date: ${dueDate}`);
  return dateOfDay(dayNumber(parsed.kind === 'date' ? parsed.date : parsed.londonDate) + 1);
}

/** The statutory rate of a case whose interest runs from `interestFrom`: fixed for the life of the case. */
function statutoryRateBasisPoints(interestFrom: string): number | undefined {
  const reference = referenceRateFor(interestFrom);
  return reference === undefined ? undefined : reference + STATUTORY_MARGIN_BASIS_POINTS;
}

/** numerator ÷ denominator rounded half up (both ≥ 0). */
function roundHalfUp(numerator: bigint, denominator: bigint): bigint {
  return (2n * numerator + denominator) / (2n * denominator);
}

interface DatedPayment {
  day: number;
  pence: number;
}

/**
 * Σ over the days d from `from` to `to` (day numbers, both included) of the principal still
 * unpaid on d, in pence-days. Payments go to principal first and count on their own day;
 * `payments` are in day order.
 */
function unpaidPrincipalDays(principalPence: number, payments: readonly DatedPayment[], from: number, to: number): bigint {
  if (to < from) return 0n;
  let paid = 0;
  let i = 0;
  // Everything paid up to and including the first day already counts on it.
  while (i < payments.length && payments[i]!.day <= from) paid += payments[i++]!.pence;
  let total = 0n;
  let intervalStart = from;
  while (i < payments.length && payments[i]!.day <= to && paid < principalPence) {
    const day = payments[i]!.day;
    total += BigInt(principalPence - paid) * BigInt(day - intervalStart);
    intervalStart = day;
    while (i < payments.length && payments[i]!.day === day) paid += payments[i++]!.pence;
  }
  if (paid < principalPence) total += BigInt(principalPence - paid) * BigInt(to + 1 - intervalStart);
  return total;
}

export function computeAmountsInPence(facts: AmountFacts): AmountsInPence {
  requirePence(facts.principalPence, 'principal');
  const asOfDay = dayNumber(facts.asOf);
  const payments = facts.payments.map((p) => {
    requirePence(p.amountPence, 'a payment');
    return { day: dayNumber(p.paidAt), pence: p.amountPence };
  });
  const interestFrom = interestFromOf(facts.dueDate);
  const paid = payments.reduce((sum, p) => sum + p.pence, 0);
  const rate = facts.claimStatutoryInterest ? (statutoryRateBasisPoints(interestFrom) ?? null) : null;
  const compensation = facts.claimStatutoryInterest ? compensationPence(facts.principalPence) : 0;
  let interest: number | null = facts.claimStatutoryInterest ? null : 0;
  if (rate !== null) {
    payments.sort((a, b) => a.day - b.day);
    const pennyDays = unpaidPrincipalDays(facts.principalPence, payments, dayNumber(interestFrom), asOfDay);
    interest = Number(roundHalfUp(pennyDays * BigInt(rate), INTEREST_DENOMINATOR));
  }
  const claimed = facts.principalPence + compensation + (interest ?? 0);
  return {
    principal: facts.principalPence,
    compensation,
    interestFrom,
    interestRateBasisPoints: rate,
    interest,
    claimed,
    paid,
    outstanding: Math.max(0, claimed - paid),
    asOf: facts.asOf,
  };
}

/** Basis points as percent with two decimals (1275 → "12.75"): the same digits as pence as pounds. */
const formatBasisPoints = formatPence;

export function computeAmounts(facts: AmountFacts): CaseAmounts {
  const pence = computeAmountsInPence(facts);
  return {
    principal: formatPence(pence.principal),
    compensation: formatPence(pence.compensation),
    interestFrom: pence.interestFrom,
    interestRate: pence.interestRateBasisPoints === null ? null : formatBasisPoints(pence.interestRateBasisPoints),
    interest: pence.interest === null ? null : formatPence(pence.interest),
    claimed: formatPence(pence.claimed),
    paid: formatPence(pence.paid),
    outstanding: formatPence(pence.outstanding),
    asOf: pence.asOf,
  };
}
