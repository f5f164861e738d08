import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { ALLOWED_TRANSITIONS } from '../../../lib/cases/case-lifecycle.js';
import { CASE_STATUSES, OPEN_STATUSES } from '../../../lib/cases/case-record.js';

/**
 * docs/api.md, "Case lifecycle": the state diagram partners read is held to ALLOWED_TRANSITIONS,
 * the one table the rules obey, so a transition added to (or removed from) either shows here.
 * In the diagram a status at the start of a line is the source of the arrows under it (`──► TO`),
 * until the next one; a status whose line says `final` has none. The gates' legend below the
 * `open statuses:` line is not part of the status diagram.
 */
const api = readFileSync(path.join(__dirname, '../../../docs/api.md'), 'utf8');
const section = api.slice(api.indexOf('### Case lifecycle'), api.indexOf('## Amounts'));
const diagram = /```\n([\s\S]*?)\n```/.exec(section)![1]!;
const STATUS = new RegExp(`^\\s*(${CASE_STATUSES.join('|')})\\b`);

function drawn() {
  const edges: string[] = [];
  const finals: string[] = [];
  let source: string | undefined;
  for (const line of diagram.split('\n')) {
    if (line.trimStart().startsWith('open statuses:')) break;
    const start = STATUS.exec(line);
    if (start) source = start[1];
    for (const [, target] of line.matchAll(/──► ([A-Z_]+)/g)) {
      if (source === undefined) throw new Error(`an arrow before any status: ${line}`);
      edges.push(`${source} → ${target}`);
    }
    if (start && /── final:/.test(line)) finals.push(start[1]!);
  }
  return { edges: [...new Set(edges)].sort(), finals: finals.sort() };
}

describe('the case lifecycle diagram in docs/api.md', () => {
  it('draws every transition the service allows, and no other', () => {
    const allowed = Object.entries(ALLOWED_TRANSITIONS).flatMap(([from, to]) => to.map((t) => `${from} → ${t}`));
    expect(drawn().edges).toEqual(allowed.sort());
  });

  it('draws every status, and marks final exactly those with no way out', () => {
    const { edges, finals } = drawn();
    const shown = new Set(edges.flatMap((e) => e.split(' → ')).concat(finals));
    expect([...shown].sort()).toEqual([...CASE_STATUSES].sort());
    const noWayOut = CASE_STATUSES.filter((s) => ALLOWED_TRANSITIONS[s].length === 0);
    expect(finals).toEqual([...noWayOut].sort());
    expect(diagram).toContain(`open statuses: ${OPEN_STATUSES.join(', ')} `);
  });
});
