import { statSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { build, type Metafile, type Plugin } from 'esbuild';
import { ESBUILD_TARGET, ESM_REQUIRE_BANNER } from '../../infra/stack/api-function.js';

/**
 * Bundles an entry exactly as the CDK stack's NodejsFunction does (infra/stack/api-function.ts):
 * `esbuild --bundle --platform=node --format=esm --target=<ESBUILD_TARGET> --minify --sourcemap
 * --sources-content=false --main-fields=module,main --banner:js=<ESM_REQUIRE_BANNER>`, AWS SDK
 * included (`bundleAwsSDK: true`, so nothing is external), output `index.mjs`. The target is the
 * stack's own constant, imported, so the two cannot drift apart.
 */
export const PROJECT_ROOT = resolve(import.meta.dirname, '../..');

export function cdkEsbuildTarget(): string {
  return ESBUILD_TARGET;
}

export interface Bundle {
  name: string;
  file: string;
  bytes: number;
  mapBytes: number;
  /** Input files (project-relative) and their bytes in the output. */
  inputs: Record<string, number>;
}

export async function bundleLikeCdk(name: string, entry: string, outRoot: string, plugins: Plugin[] = []): Promise<Bundle> {
  const outdir = join(outRoot, name);
  await mkdir(outdir, { recursive: true });
  const outfile = join(outdir, 'index.mjs');
  const result = await build({
    absWorkingDir: PROJECT_ROOT,
    entryPoints: [join(PROJECT_ROOT, entry)],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: cdkEsbuildTarget(),
    minify: true,
    sourcemap: true,
    sourcesContent: false,
    mainFields: ['module', 'main'],
    banner: { js: ESM_REQUIRE_BANNER },
    outfile,
    metafile: true,
    logLevel: 'warning',
    plugins,
  });
  await writeFile(join(outdir, 'meta.json'), JSON.stringify(result.metafile));
  const output = result.metafile.outputs[
    Object.keys(result.metafile.outputs).find((k) => k.endsWith('index.mjs'))!
  ] as Metafile['outputs'][string];
  const inputs: Record<string, number> = {};
  for (const [path, info] of Object.entries(output.inputs)) inputs[path] = info.bytesInOutput;
  return { name, file: outfile, bytes: statSync(outfile).size, mapBytes: statSync(`${outfile}.map`).size, inputs };
}

/** Input paths of the bundle that belong to a package (e.g. `@aws-sdk/client-s3`). */
export function packageInputs(bundle: Bundle, pattern: RegExp): string[] {
  return Object.keys(bundle.inputs).filter((path) => pattern.test(path));
}

/** Bytes in the output per package (node_modules) or per top folder (project code). */
export function bytesByPackage(bundle: Bundle): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [path, bytes] of Object.entries(bundle.inputs)) {
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
    const key = m ? m[1]! : path.split('/')[0]!;
    out[key] = (out[key] ?? 0) + bytes;
  }
  return out;
}
