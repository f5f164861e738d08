import { execFileSync } from 'node:child_process';
import { round } from './stats.js';

/**
 * The benchmark's report: every figure's check against its target (the summary table and
 * bench/results.json), the sections' results, and the table and number formats they print.
 */

export interface Check {
  section: string;
  figure: string;
  value: number | string;
  target: string;
  pass: boolean;
}
export const checks: Check[] = [];
export const results: Record<string, unknown> = {};

export function check(section: string, figure: string, value: number | string, target: string, pass: boolean): string {
  checks.push({ section, figure, value, target, pass });
  return pass ? 'PASS' : 'FAIL';
}

/** A check that nothing was found: `none`, or the found items named. */
export function checkNone(section: string, figure: string, found: readonly string[]): string {
  return check(section, figure, found.length === 0 ? 'none' : found.join(', '), 'none', found.length === 0);
}

/** One row a figure, as the sections run from their own files report them. */
export interface FigureRow {
  figure: string;
  value: number | string;
  target: string;
  pass: boolean;
  note: string;
}

/** A section's figure rows as one table, each checked against its target. */
export function figureTable(section: string, rows: readonly FigureRow[]): void {
  table(
    ['figure', 'value', 'target', '', 'note'],
    rows.map((r) => [r.figure, r.value, r.target, check(section, r.figure, r.value, r.target, r.pass), r.note]),
    ['l', 'r', 'r', 'l', 'l'],
  );
}

export function table(headers: string[], rows: (string | number)[][], align?: ('l' | 'r')[]): void {
  const cells = rows.map((r) => r.map(String));
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((r) => (r[i] ?? '').length)));
  const fmt = (r: string[]) =>
    r.map((c, i) => ((align?.[i] ?? (i === 0 ? 'l' : 'r')) === 'l' ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  console.log(fmt(headers));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of cells) console.log(fmt(r));
}

export const heading = (text: string) => console.log(`\n== ${text}\n`);
export const ms = (v: number) => round(v, 1).toFixed(1);
export const kib = (bytes: number) => `${(bytes / 1024).toFixed(0)} KiB`;

export function gitCommit(cwd: string): string {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd, encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}
