import { config } from '../../lib/config.js';
import { DynamoCaseWriter } from '../../lib/data/case-writer.js';
import { DynamoIdempotencyStore } from '../../lib/data/idempotency-store.js';
import { DynamoReferenceAllocator } from '../../lib/data/reference-counter.js';
import { DynamoCompanyStore } from '../../lib/data/company-store.js';
import { DynamoApiKeyStore } from '../../lib/data/api-key-store.js';
import { documentClient } from '../../lib/data/dynamo-client.js';
import { S3InvoiceFileStore } from '../../lib/uploads/file-store.js';
import { buildCreateCasesHandler, defaultCreateCasesDeps } from '../../functions/create-cases.js';
import { newPartner, type Partner } from '../support/fixtures.js';
import { checkStorageInvariants, outcome, postCases, readCase, uploadInvoice, validCase } from '../support/cases.js';
import { faultyDocumentClient, faultyS3Client, type Fault } from '../support/faulty-client.js';
import { recordCounts } from './summary.js';

/**
 * Storage faults driven by seeded randomness over many batches and retries, with and without
 * Idempotency-Keys: throttling, transaction conflicts, timeouts, internal errors and lost
 * responses (the write happened, the answer did not arrive), on every storage call of the
 * create path. Afterwards the table is scanned for the invariants, and resubmitting without
 * faults must end with exactly one case per invoiceRef.
 */
const ROUNDS = process.env.DEEP ? 400 : 40;
const FAULT_RATE = 0.2;
const FAULTS: Fault[] = ['throttle', 'conflict', 'timeout', 'internal', 'lost-response'];

/** Mulberry32: a tiny seeded PRNG, so a failure can be replayed with FAULT_SEED. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SEED = Number(process.env.FAULT_SEED ?? 7);

describe('storage faults over many batches and retries', () => {
  let partners: Partner[];
  const files = new Map<string, string>();

  beforeAll(async () => {
    partners = [await newPartner(), await newPartner()];
    for (const p of partners) files.set(p.companyId, await uploadInvoice(p.apiKey));
  });

  it(`lose nothing and create nothing twice (${ROUNDS} rounds, seed ${SEED})`, async () => {
    const random = prng(SEED);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
    const decide = (): Fault | undefined => (random() < FAULT_RATE ? pick(FAULTS) : undefined);
    const ddb = faultyDocumentClient({ decide });
    const s3 = faultyS3Client({ decide });
    const table = config().tableName;
    const handler = buildCreateCasesHandler({
      ...defaultCreateCasesDeps(),
      // Authentication stays reliable here: its failures are plain 500s with nothing written.
      keys: new DynamoApiKeyStore(documentClient(config()), table),
      companies: new DynamoCompanyStore(ddb.client, table),
      writer: new DynamoCaseWriter(ddb.client, table, { maxAttempts: 3, baseDelayMs: 2, maxDelayMs: 10 }),
      idempotency: new DynamoIdempotencyStore(ddb.client, table),
      references: new DynamoReferenceAllocator(ddb.client, table),
      files: new S3InvoiceFileStore(s3.client, config().bucketName),
    });

    // invoiceRef -> the one case id ever reported for it, per company.
    const reported = new Map<string, string>();
    const usedKeys: string[] = [];
    const statuses: Record<number, number> = {};
    let contradictions = 0;

    for (let round = 0; round < ROUNDS; round++) {
      const partner = pick(partners);
      const size = 1 + Math.floor(random() * 12);
      const cases = Array.from({ length: size }, () => validCase(files.get(partner.companyId)!, { invoiceRef: `FAULT-${Math.floor(random() * 30)}` }));
      const roll = random();
      const key = roll < 0.3 ? undefined : roll < 0.8 || usedKeys.length === 0 ? `fault-${SEED}-${round}` : pick(usedKeys);
      if (key) usedKeys.push(key);
      const res = await postCases(partner.apiKey, { cases }, key ? { 'Idempotency-Key': key } : {}, handler);
      statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
      expect([200, 201, 409, 500]).toContain(res.statusCode);
      if (res.statusCode === 200 || res.statusCode === 201) {
        const { created, rejected } = outcome(res);
        expect([...created, ...rejected].map((i) => i.index).sort((a, b) => a - b)).toEqual(cases.map((_, i) => i));
        for (const item of created) {
          const k = `${partner.companyId}|${item.invoiceRef}`;
          const earlier = reported.get(k);
          if (earlier && earlier !== item.id) contradictions++;
          reported.set(k, item.id);
        }
        for (const item of rejected.filter((r) => r.code === 'DUPLICATE')) {
          const k = `${partner.companyId}|${item.invoiceRef}`;
          const earlier = reported.get(k);
          if (earlier && earlier !== item.existingCaseId) contradictions++;
          if (item.existingCaseId) reported.set(k, item.existingCaseId);
        }
      }
    }
    expect(contradictions).toBe(0);

    // Every case ever reported (created, or named as the existing one) exists and is readable.
    for (const [k, id] of reported) {
      const partner = partners.find((p) => k.startsWith(p.companyId))!;
      expect((await readCase(partner.apiKey, id)).statusCode).toBe(200);
    }
    const companyIds = new Set(partners.map((p) => p.companyId));
    const midway = await checkStorageInvariants(companyIds);
    expect(midway.violations).toEqual([]);

    // Resubmitting everything without faults creates each missing case exactly once.
    for (const partner of partners) {
      const all = Array.from({ length: 30 }, (_, n) => validCase(files.get(partner.companyId)!, { invoiceRef: `FAULT-${n}` }));
      const res = await postCases(partner.apiKey, { cases: all });
      const { created, rejected } = outcome(res);
      expect(rejected.every((r) => r.code === 'DUPLICATE')).toBe(true);
      for (const r of rejected) {
        const earlier = reported.get(`${partner.companyId}|${r.invoiceRef}`);
        if (earlier) expect(r.existingCaseId).toBe(earlier);
      }
      expect(created.length + rejected.length).toBe(30);
    }
    const final = await checkStorageInvariants(companyIds);
    expect(final.violations).toEqual([]);

    const injected = [ddb.counter, s3.counter].reduce((sum, c) => sum + Object.values(c.injected).reduce((a, b) => a + b, 0), 0);
    const byKind = Object.fromEntries(FAULTS.map((f) => [f, ddb.counter.injected[f] + s3.counter.injected[f]]));
    const invariantsChecked = midway.checked + final.checked + reported.size;
    recordCounts('storage-faults', { faultsInjected: injected, invariantsChecked });
    console.log(`storage faults: ${ROUNDS} batches, ${injected} faults injected ${JSON.stringify(byKind)}, statuses ${JSON.stringify(statuses)}, ${invariantsChecked} invariants checked`);
    expect(injected).toBeGreaterThan(ROUNDS / 2);
  });
});
