import { buildCreateCasesHandler } from '../../functions/create-cases.js';
import { AccountsService } from '../../lib/accounts/accounts-service.js';
import { fileKeyProblem, issueFileKey } from '../../lib/uploads/file-key.js';
import { benchCases, createCasesEvent, lambdaContext, type Handler } from '../../test/support/storage-rig/events.js';
import { median, p95 } from './stats.js';
import {
  MemoryApiKeyStore,
  MemoryCaseWriter,
  MemoryCompanyStore,
  MemoryFileStore,
  MemoryIdempotencyStore,
  MemoryReferenceAllocator,
  silentLog,
} from '../../test/support/memory-stores.js';

/**
 * The create handler over the in-memory stores: what is left of a request is the handler's own
 * CPU work (middy chain, authentication hash, JSON parsing, validation, item building, outcome
 * assembly, response serialisation).
 */
export interface CpuRig {
  handler: Handler;
  apiKey: string;
  fileKeys: string[];
  writer: MemoryCaseWriter;
}

export async function cpuRig(fileCount = 100): Promise<CpuRig> {
  const keys = new MemoryApiKeyStore();
  const companies = new MemoryCompanyStore();
  const accounts = new AccountsService(companies, keys);
  const company = await accounts.createCompany('Bench CPU Co');
  const key = await accounts.createKey(company.companyId, ['cases:read', 'cases:write']);
  const files = new MemoryFileStore();
  const fileKeys = Array.from({ length: fileCount }, () => issueFileKey(company.companyId, 'application/pdf'));
  for (const fileKey of fileKeys) files.keys.add(fileKey);
  const writer = new MemoryCaseWriter();
  const handler = buildCreateCasesHandler({
    keys,
    companies,
    writer,
    idempotency: new MemoryIdempotencyStore(),
    references: new MemoryReferenceAllocator(),
    log: silentLog,
    files,
    fileKeyProblem,
    now: () => new Date(),
    idempotencyTtlSeconds: 24 * 3600,
    claimHorizonSeconds: 20,
  }) as unknown as Handler;
  // Warm the key: the in-memory touch is free, but keep the path identical to the measured one.
  await keys.touch(key.keyId, new Date().toISOString(), new Date(0).toISOString());
  return { handler, apiKey: key.apiKey, fileKeys, writer };
}

export interface CpuSample {
  cases: number;
  iterations: number;
  medianMs: number;
  p95Ms: number;
}

/** Median handler time for a batch of `count` valid cases, after `warmup` unmeasured requests. */
export async function measureCreateCpu(rig: CpuRig, count: number, iterations: number, warmup: number, tag: string): Promise<CpuSample> {
  const times: number[] = [];
  for (let i = 0; i < warmup + iterations; i++) {
    const event = createCasesEvent(rig.apiKey, benchCases(`${tag}-${count}-${i}`, count, rig.fileKeys));
    const context = lambdaContext();
    const start = performance.now();
    const result = await rig.handler(event, context);
    const elapsed = performance.now() - start;
    if (result.statusCode !== 201) throw new Error(`CPU run: expected 201, got ${result.statusCode} ${result.body.slice(0, 300)}`);
    if (i >= warmup) times.push(elapsed);
    if (rig.writer.cases.size > 20_000) rig.writer.clear();
  }
  return { cases: count, iterations, medianMs: median(times), p95Ms: p95(times) };
}
