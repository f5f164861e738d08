import { join } from 'node:path';
import { IDEMPOTENCY_CLAIM_HORIZON_SECONDS } from '../infra/contract/route-table.js';
import { DEFAULT_STACK_CONFIG, functionEnvironment } from '../infra/contract/stack-config.js';
import type { AppConfig } from '../lib/runtime/config.js';
import { benchCases, createCasesEvent, createUploadEvent, getCaseEvent } from '../test/support/storage-rig/events.js';
import type { Rig } from '../test/support/storage-rig/scenarios.js';
import { bundleLikeCdk, bytesByPackage, packageInputs } from './lib/bundle.js';
import { runChild } from './lib/processes.js';
import { check, checkNone, heading, kib, ms, results, table } from './lib/report.js';
import { median, round } from './lib/stats.js';

export interface ColdStartAndMemoryOptions {
  /** The local stack's rig (its partner, key and seeded case). */
  local: Rig;
  cfg: AppConfig;
  /** The local stack's environment, given to every fresh process. */
  stackEnv: Record<string, string>;
  tmp: string;
  coldRuns: number;
  esbuildTarget: string;
  waitForQuiet(before: string): Promise<void>;
}

/**
 * Sections 4 (cold start) and 5 (memory) of `npm run bench`: the three API bundles built as the
 * CDK stack builds them, each with its SDK-only floor, started in fresh processes; then the peak
 * RSS of 100-case creates in one fresh process. Prints both tables and adds their checks and
 * results to the run's report.
 */
export async function coldStartAndMemoryBench(options: ColdStartAndMemoryOptions): Promise<void> {
  const { local, cfg, waitForQuiet } = options;
  await waitForQuiet('section 4');
  console.log('\nSection 4: bundling like the CDK stack and starting fresh processes...');
  const bundleDir = join(options.tmp, 'bundles');
  const functions = [
    { name: 'get-case', entry: 'functions/get-case.ts', floor: 'bench/floors/get-case.ts', kind: 'get' as const },
    { name: 'create-cases', entry: 'functions/create-cases.ts', floor: 'bench/floors/create-cases.ts', kind: 'create' as const },
    { name: 'create-upload', entry: 'functions/create-upload.ts', floor: 'bench/floors/create-upload.ts', kind: 'upload' as const },
  ];
  const variants: {
    name: string;
    fn: (typeof functions)[number];
    role: 'handler' | 'floor';
    bundle: Awaited<ReturnType<typeof bundleLikeCdk>>;
  }[] = [];
  for (const fn of functions) {
    variants.push({ name: fn.name, fn, role: 'handler', bundle: await bundleLikeCdk(fn.name, fn.entry, bundleDir) });
    variants.push({ name: `floor-${fn.name}`, fn, role: 'floor', bundle: await bundleLikeCdk(`floor-${fn.name}`, fn.floor, bundleDir) });
  }
  const childEnv: Record<string, string> = {
    ...functionEnvironment(DEFAULT_STACK_CONFIG, {
      tableName: cfg.tableName,
      bucketName: cfg.bucketName,
      claimHorizonSeconds: IDEMPOTENCY_CLAIM_HORIZON_SECONDS,
    }),
    ...options.stackEnv,
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  };
  const cold = new Map<string, Awaited<ReturnType<typeof runChild>>[]>(variants.map((v) => [v.name, []]));
  let coldSeq = 0;
  for (let r = 0; r < options.coldRuns; r++) {
    for (const v of variants) {
      await local.fixtures.warmKey(local.partner.keyId);
      const event =
        v.fn.kind === 'get'
          ? getCaseEvent(local.partner.apiKey, local.seedCaseId)
          : v.fn.kind === 'create'
            ? createCasesEvent(local.partner.apiKey, benchCases(`cold-${++coldSeq}`, 1, local.partner.fileKeys))
            : createUploadEvent(local.partner.apiKey);
      const result = await runChild(v.bundle.file, [event], childEnv, join(options.tmp, 'scratch'), v.name);
      const status = result.invocations[0]!.statusCode;
      if (status !== 200 && status !== 201)
        throw new Error(`${v.name}: cold invocation answered ${status}: ${result.invocations[0]!.body ?? ''}`);
      cold.get(v.name)!.push(result);
    }
  }

  await waitForQuiet('section 5');
  console.log('Section 5: peak RSS of 100-case creates in a fresh process...');
  const createBundle = variants.find((v) => v.name === 'create-cases')!.bundle;
  const memoryEvents = Array.from({ length: 6 }, (_, i) =>
    createCasesEvent(local.partner.apiKey, benchCases(`mem-${i}`, 100, local.partner.fileKeys)),
  );
  await local.fixtures.warmKey(local.partner.keyId);
  const memory = await runChild(createBundle.file, memoryEvents, childEnv, join(options.tmp, 'scratch'), 'memory');
  for (const inv of memory.invocations)
    if (inv.statusCode !== 201) throw new Error(`memory run answered ${inv.statusCode}: ${inv.body ?? ''}`);

  heading(
    `4. Cold start: bundled as the CDK stack does (esbuild, ESM, minified, ${options.esbuildTarget}, SDK bundled), fresh Node process, median of ${options.coldRuns}`,
  );
  const coldRows: (string | number)[][] = [];
  const coldResults: Record<string, unknown> = {};
  const s3Pattern = /node_modules\/@aws-sdk\/(client-s3|middleware-sdk-s3|s3-request-presigner)\//;
  for (const fn of functions) {
    const floorRuns = cold.get(`floor-${fn.name}`)!;
    const floorCold = median(floorRuns.map((x) => x.coldMs));
    for (const role of ['handler', 'floor'] as const) {
      const v = variants.find((x) => x.fn === fn && x.role === role)!;
      const runs = cold.get(v.name)!;
      const coldMs = median(runs.map((x) => x.coldMs));
      const ratio = coldMs / floorCold;
      const s3 = packageInputs(v.bundle, s3Pattern).length;
      const zod = bytesByPackage(v.bundle).zod ?? 0;
      let mark = '';
      if (role === 'handler') mark = check('cold start', `${fn.name}: load + first invoke ÷ floor`, round(ratio, 2), '≤ 1.3', ratio <= 1.3);
      coldRows.push([
        v.name,
        kib(v.bundle.bytes),
        zod ? kib(zod) : '-',
        s3 ? `${s3} files` : 'none',
        ms(median(runs.map((x) => x.loadMs))),
        ms(median(runs.map((x) => x.firstInvokeMs))),
        ms(coldMs),
        ms(median(runs.map((x) => x.processStartToFirstResponseMs))),
        role === 'floor' ? '1.00' : round(ratio, 2).toFixed(2),
        role === 'handler' ? '≤ 1.3' : '',
        mark,
      ]);
      coldResults[v.name] = {
        role,
        bytes: v.bundle.bytes,
        sourceMapBytes: v.bundle.mapBytes,
        zodBytes: zod,
        s3InputFiles: s3,
        loadMs: round(median(runs.map((x) => x.loadMs))),
        firstInvokeMs: round(median(runs.map((x) => x.firstInvokeMs))),
        loadPlusFirstInvokeMs: round(coldMs),
        processStartToFirstResponseMs: round(median(runs.map((x) => x.processStartToFirstResponseMs))),
        ratioToFloor: round(ratio, 2),
        peakRssMb: round(median(runs.map((x) => x.invocations[0]!.maxRssMb))),
        zodLocalesBytes: Object.entries(v.bundle.inputs).reduce(
          (n, [path, bytes]) => (path.includes('zod/v4/locales/') ? n + bytes : n),
          0,
        ),
        largestInputs: Object.entries(bytesByPackage(v.bundle))
          .sort((a, b) => b[1] - a[1])
          .slice(0, 10)
          .map(([name, bytes]) => ({ name, bytes })),
      };
    }
  }
  table(['bundle', 'bytes', 'zod', 'S3 code', 'load', '1st invoke', 'load+invoke', 'from exec', '÷ floor', 'target', ''], coldRows);
  for (const fn of functions) {
    const r = coldResults[fn.name] as { zodLocalesBytes: number; largestInputs: { name: string; bytes: number }[] };
    console.log(
      `${fn.name} bundle, largest parts: ${r.largestInputs
        .slice(0, 6)
        .map((x) => `${x.name} ${kib(x.bytes)}`)
        .join(', ')} (zod locales: ${kib(r.zodLocalesBytes)})`,
    );
  }
  const readS3 = packageInputs(variants.find((v) => v.name === 'get-case')!.bundle, s3Pattern);
  const readMark = checkNone('cold start', 'read bundle carries no S3 code', readS3);
  console.log(
    `\nRead handler (get-case) bundle: S3 code ${readS3.length === 0 ? 'none' : readS3.length + ' files'} (metafile inputs under @aws-sdk/client-s3, middleware-sdk-s3, s3-request-presigner) → ${readMark}`,
  );
  console.log(
    'load = import of the bundle (parse, compile, top-level code: config, clients, schemas); 1st invoke = first request against the',
  );
  console.log(
    'local stores with a valid, warmed key; from exec = from process start (Node bootstrap included). Floors: bench/floors/*.ts,',
  );
  console.log('the same SDK clients and storage calls without the project code.');
  results.coldStart = {
    esbuildTarget: options.esbuildTarget,
    nodeOptions: childEnv.NODE_OPTIONS,
    bundles: coldResults,
    readBundleS3Inputs: readS3,
  };

  heading('5. Memory: create-cases bundle, fresh process, 100-case creates against the local stores');
  const firstRss = memory.invocations[0]!.maxRssMb;
  const lastRss = memory.invocations[memory.invocations.length - 1]!.maxRssMb;
  const floorRss = median(cold.get('floor-create-cases')!.map((x) => x.invocations[0]!.maxRssMb));
  const handlerRss1 = median(cold.get('create-cases')!.map((x) => x.invocations[0]!.maxRssMb));
  const memMark = check('memory', 'peak RSS, cold start + one 100-case create', round(firstRss), '≤ 128 MB', firstRss <= 128);
  table(
    ['process', 'peak RSS MB', 'target', ''],
    [
      ['cold start + one 100-case create', round(firstRss).toFixed(1), '≤ 128', memMark],
      [`after ${memory.invocations.length} 100-case creates`, round(lastRss).toFixed(1), '', ''],
      ['create-cases, cold + 1-case create', round(handlerRss1).toFixed(1), '', ''],
      ['SDK-only floor, cold + 1-case create', round(floorRss).toFixed(1), '', ''],
    ],
  );
  console.log(`V8 heap in use at the end: ${ms(memory.heapUsedMb)} MB.`);
  console.log(
    `100-case create in that process: first ${ms(memory.invocations[0]!.ms)} ms (cold), then ${memory.invocations
      .slice(1)
      .map((i) => ms(i.ms))
      .join(', ')} ms (DynamoDB Local).`,
  );
  console.log(
    `CDK memory settings today: create-cases ${DEFAULT_STACK_CONFIG.createCasesMemoryMb} MB, get-case and create-upload ${DEFAULT_STACK_CONFIG.functionMemoryMb} MB.`,
  );
  results.memory = {
    peakRssMbAfterOne100CaseCreate: round(firstRss),
    peakRssMbAfterSix100CaseCreates: round(lastRss),
    peakRssMbCreateCasesCold1Case: round(handlerRss1),
    peakRssMbSdkFloorCold1Case: round(floorRss),
    heapUsedMbAtEnd: round(memory.heapUsedMb),
    target: 128,
    cdkMemoryMb: { createCases: DEFAULT_STACK_CONFIG.createCasesMemoryMb, others: DEFAULT_STACK_CONFIG.functionMemoryMb },
  };
}
