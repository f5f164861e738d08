import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { API_FUNCTIONS } from '../../infra/contract/route-table.js';

/**
 * The docs a newcomer reads first must describe the tree that is there: the README's layout names
 * every folder and every handler, and no link or document name in README.md or docs/*.md leads
 * nowhere. Paths here are relative to the project root.
 */
const ROOT = path.resolve(__dirname, '../..');

const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const isDirectory = (file: string) => existsSync(path.join(ROOT, file)) && statSync(path.join(ROOT, file)).isDirectory();
const foldersIn = (dir: string) =>
  readdirSync(path.join(ROOT, dir), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => (dir === '.' ? `${e.name}/` : `${dir}/${e.name}/`));

/** Folders git ignores or keeps for itself (.gitignore), never part of the layout. */
const NOT_IN_THE_LAYOUT = new Set(['.git/', 'node_modules/', '.local/', 'cdk.out/', 'coverage/']);

const DOCS = [
  'README.md',
  ...readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** The text of a level-2 section, from its heading to the next one. */
function section(markdown: string, heading: string): string {
  const start = markdown.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`no "## ${heading}" section`);
  const end = markdown.indexOf('\n## ', start + 1);
  return markdown.slice(start, end < 0 ? undefined : end);
}

/** The paths the README's layout block starts its lines with (`functions/`, `lib/cases/`, ...). */
function layoutEntries(): { entries: string[]; text: string } {
  const text = section(read('README.md'), 'Layout');
  const block = /```\n([\s\S]*?)```/.exec(text)?.[1] ?? '';
  const entries = block
    .split('\n')
    .map((line) => /^(\S+\/)\s/.exec(line)?.[1])
    .filter((entry): entry is string => entry !== undefined);
  return { entries, text };
}

/** Markdown code (fenced blocks and inline spans) removed: a link-like text in code is not a link. */
function withoutCode(markdown: string): string {
  return markdown.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const [, heading] of markdown.replace(/```[\s\S]*?```/g, '').matchAll(/^#{1,6} (.+)$/gm)) {
    const slug = (heading as string)
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return anchors;
}

describe("the README's layout", () => {
  it('names every folder at the top, in lib/, infra/ and test/ (only the ignored ones are left out)', () => {
    const folders = ['.', 'lib', 'infra', 'test'].flatMap(foldersIn).filter((f) => !NOT_IN_THE_LAYOUT.has(f));
    const { entries } = layoutEntries();
    expect(folders.filter((f) => !entries.includes(f))).toEqual([]);
  });

  it('names only folders that exist', () => {
    expect(layoutEntries().entries.filter((entry) => !isDirectory(entry))).toEqual([]);
  });

  it('names every handler in functions/ by its file name', () => {
    const { text } = layoutEntries();
    const handlers = readdirSync(path.join(ROOT, 'functions'))
      .filter((f) => f.endsWith('.ts'))
      .map((f) => f.slice(0, -'.ts'.length));
    expect(handlers.filter((name) => !new RegExp(`(^|[\\s,(])${name}([\\s,)]|$)`, 'm').test(text))).toEqual([]);
  });
});

describe('the links in README.md and docs/*.md', () => {
  it('each lead to a file that exists, and to a heading it has when they name one', () => {
    const broken: string[] = [];
    for (const doc of DOCS) {
      for (const [, target] of withoutCode(read(doc)).matchAll(/\]\(([^)\s]+)\)/g)) {
        const link = target as string;
        if (/^[a-z]+:/i.test(link)) continue; // https:, mailto:
        const [file, anchor] = link.split('#') as [string, string | undefined];
        const resolved = file === '' ? doc : path.normalize(path.join(path.dirname(doc), file));
        if (!existsSync(path.join(ROOT, resolved))) broken.push(`${doc}: ${link} (no ${resolved})`);
        else if (anchor && resolved.endsWith('.md') && !anchorsOf(read(resolved)).has(anchor))
          broken.push(`${doc}: ${link} (no heading #${anchor} in ${resolved})`);
      }
    }
    expect(broken).toEqual([]);
  });
});

describe('the documents the docs name', () => {
  it('all exist in this repository, whether named from the project root or beside the naming document', () => {
    const missing: string[] = [];
    for (const doc of DOCS) {
      for (const [name] of read(doc).matchAll(/(?<![\w./-])(?:\.\.?\/)*(?:[\w-]+\/)*[\w-]+\.md\b/g)) {
        const candidates = [name, path.join(path.dirname(doc), name)].map((c) => path.normalize(c));
        const inThisRepository = (c: string) => !c.startsWith('..') && existsSync(path.join(ROOT, c));
        if (!candidates.some(inThisRepository)) missing.push(`${doc}: ${name}`);
      }
    }
    expect(missing).toEqual([]);
  });
});

/** The headings and bold labels (`**Replaying the queue:**`) of a document, as plain text. */
function sectionNamesOf(markdown: string): string[] {
  const text = markdown.replace(/```[\s\S]*?```/g, '');
  const headings = [...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => m[1] as string);
  const labels = [...text.matchAll(/\*\*([^*]+)\*\*/g)].map((m) => m[1] as string);
  return [...headings, ...labels].map((name) => name.replace(/`/g, '').trim());
}

describe('the sections the docs cite by name', () => {
  it('(`deploy.md ("Stages")`, `docs/uploads.md, "Upload records"`) each exist in the document cited', () => {
    const missing: string[] = [];
    for (const doc of DOCS) {
      for (const [, name, cited] of read(doc).matchAll(/((?:docs\/)?[\w-]+\.md)\)?,? \(?"([^"]+)"/g)) {
        const file = [name as string, path.join(path.dirname(doc), name as string)].find((c) => existsSync(path.join(ROOT, c)));
        if (!file) continue; // a missing document is the test above's
        if (!sectionNamesOf(read(file)).some((section) => section.startsWith(cited as string))) missing.push(`${doc}: ${name} "${cited}"`);
      }
    }
    expect(missing).toEqual([]);
  });
});

describe("the README's configuration table", () => {
  it('names every variable lib/runtime/config.ts reads', () => {
    const variables = [...read('lib/runtime/config.ts').matchAll(/^ {2}([A-Z][A-Z0-9_]+):/gm)].map((m) => m[1] as string);
    expect(variables.length).toBeGreaterThan(10);
    const table = section(read('README.md'), 'Configuration');
    expect(variables.filter((name) => !table.includes(`\`${name}\``))).toEqual([]);
  });
});

describe('docs/deploy.md', () => {
  it('counts the functions there are: the API functions of the route table, the workers beside them, all of them', () => {
    const apiFunctions = Object.keys(API_FUNCTIONS).length;
    const handlers = readdirSync(path.join(ROOT, 'functions')).filter((f) => f.endsWith('.ts')).length;
    const stated = (pattern: RegExp) => Number(pattern.exec(read('docs/deploy.md'))?.[1]);
    expect({
      api: stated(/\b(\d+) API functions, one per route/),
      workers: stated(/\b(\d+) workers:/),
      all: stated(/\b(\d+) Lambda functions\b/),
    }).toEqual({ api: apiFunctions, workers: handlers - apiFunctions, all: handlers });
  });
});
