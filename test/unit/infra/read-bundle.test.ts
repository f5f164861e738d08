import { join, resolve } from 'node:path';
import { build } from 'esbuild';
import { ESBUILD_TARGET, ESM_REQUIRE_BANNER } from '../../../infra/stack/api-function.js';

/**
 * A case read's cold start is measured against an SDK-only floor (`npm run bench`, section 4),
 * and what the read's bundle carries beyond the floor is what it loads on every cold start. Two
 * libraries it never needs have crept in through shared modules before: S3's client, and classic
 * zod through a schema built at load (the list cursor's, via the table adapters), which made
 * classic zod's whole module part of every cold start. This bundles the read's handler as the
 * stack does (ESM, its target, minified, tree-shaken; infra/stack/api-function.ts; no source map,
 * which changes nothing bundled) and lists what it holds.
 */
const ROOT = resolve(import.meta.dirname, '../../..');

async function bundledInputs(entry: string): Promise<string[]> {
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: [join(ROOT, entry)],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: ESBUILD_TARGET,
    minify: true,
    mainFields: ['module', 'main'],
    banner: { js: ESM_REQUIRE_BANNER },
    write: false,
    outfile: 'index.mjs',
    metafile: true,
    logLevel: 'silent',
  });
  const output = Object.values(result.metafile.outputs)[0]!;
  return Object.entries(output.inputs)
    .filter(([, info]) => info.bytesInOutput > 0)
    .map(([path]) => path);
}

describe("the case read's function bundle", () => {
  let inputs: string[];
  beforeAll(async () => {
    inputs = await bundledInputs('functions/get-case.ts');
  }, 60_000);

  it('carries no classic zod: nothing it loads builds a classic schema, and config and cursors use zod mini', () => {
    expect(inputs.filter((path) => path.includes('node_modules/zod/v4/classic/'))).toEqual([]);
    // The check above means something only if zod is there at all (the configuration's mini schemas).
    expect(inputs.some((path) => path.includes('node_modules/zod/v4/mini/'))).toBe(true);
  });

  it('carries no S3 code', () => {
    expect(inputs.filter((path) => /node_modules\/@aws-sdk\/(client-s3|middleware-sdk-s3|s3-request-presigner)\//.test(path))).toEqual([]);
  });
});
