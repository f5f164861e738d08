import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { gzipSync } from 'node:zlib';

/**
 * Prints the size of each Lambda bundle in a synthesised cloud assembly (`npm run synth` runs it
 * after `cdk synth`). For every function in every stack template it reads the asset directory the
 * function's code points at (`aws:asset:path` metadata) and reports the bundle, its gzip size (close
 * to the deployed zip) and the source map. Exits 1 when the assembly holds no bundled function.
 *
 * Usage: tsx infra/stack/print-bundle-sizes.ts [cdk.out]
 */
interface TemplateResource {
  Type: string;
  Metadata?: Record<string, unknown>;
}

const assemblyDir = path.resolve(process.argv[2] ?? 'cdk.out');

function kib(bytes: number): string {
  return `${(bytes / 1024).toFixed(1)} KiB`;
}

function filesIn(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? filesIn(full) : [full];
  });
}

if (!existsSync(path.join(assemblyDir, 'manifest.json'))) {
  console.error(`No cloud assembly at ${assemblyDir}; run cdk synth first.`);
  process.exit(1);
}

const rows: string[][] = [];
for (const templateFile of readdirSync(assemblyDir).filter((f) => f.endsWith('.template.json'))) {
  const template = JSON.parse(readFileSync(path.join(assemblyDir, templateFile), 'utf8')) as {
    Resources?: Record<string, TemplateResource>;
  };
  for (const resource of Object.values(template.Resources ?? {})) {
    if (resource.Type !== 'AWS::Lambda::Function') continue;
    const assetPath = resource.Metadata?.['aws:asset:path'];
    const constructPath = String(resource.Metadata?.['aws:cdk:path'] ?? '?');
    if (typeof assetPath !== 'string') continue;
    const dir = path.join(assemblyDir, assetPath);
    if (!existsSync(dir) || !statSync(dir).isDirectory()) continue;
    const files = filesIn(dir);
    const code = files.filter((f) => /\.(m?js|cjs)$/.test(f));
    const maps = files.filter((f) => f.endsWith('.map'));
    const codeBytes = code.reduce((sum, f) => sum + statSync(f).size, 0);
    const gzipBytes = code.reduce((sum, f) => sum + gzipSync(readFileSync(f)).length, 0);
    const mapBytes = maps.reduce((sum, f) => sum + statSync(f).size, 0);
    rows.push([constructPath.replace(/\/Resource$/, ''), kib(codeBytes), kib(gzipBytes), kib(mapBytes), assetPath]);
  }
}

if (rows.length === 0) {
  console.error(`No bundled Lambda function found in ${assemblyDir}.`);
  process.exit(1);
}

const header = ['function', 'bundle', 'gzip', 'source map', 'asset'];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
const line = (cells: string[]) =>
  cells.map((c, i) => (i === 0 || i === 4 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
console.log(line(header));
for (const row of rows.sort((a, b) => (a[0] ?? '').localeCompare(b[0] ?? ''))) console.log(line(row));
