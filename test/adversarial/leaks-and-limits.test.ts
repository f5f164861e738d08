import { DEFAULT_STACK_CONFIG } from '../../infra/stack-config.js';
import { logger } from '../../lib/logger.js';
import { config } from '../../lib/config.js';
import { DynamoCaseWriter } from '../../lib/data/case-writer.js';
import { buildCreateCasesHandler, defaultCreateCasesDeps } from '../../functions/create-cases.js';
import { DynamoReferenceAllocator } from '../../lib/data/reference-counter.js';
import { accounts, newPartner, type Partner } from '../support/fixtures.js';
import { outcome, postCases, readCase, uploadInvoice, validCase } from '../support/cases.js';
import { faultyDocumentClient } from '../support/faulty-client.js';
import { recordCounts } from './summary.js';

let leakChecks = 0;
let limitChecks = 0;
afterAll(() => recordCounts('leaks-and-limits', { leakChecks, limitChecks }));

describe('logs and error bodies leak nothing', () => {
  const lines: string[] = [];
  const originals = { stdout: process.stdout.write.bind(process.stdout), stderr: process.stderr.write.bind(process.stderr) };
  const consoleMethods = ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const;
  const spies: jest.SpyInstance[] = [];

  beforeAll(() => {
    logger.setLogLevel('DEBUG');
    const capture = (chunk: unknown) => {
      lines.push(String(chunk));
      return true;
    };
    process.stdout.write = capture as typeof process.stdout.write;
    process.stderr.write = capture as typeof process.stderr.write;
    for (const m of consoleMethods) spies.push(jest.spyOn(console, m).mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(' '))));
  });

  afterAll(() => {
    process.stdout.write = originals.stdout;
    process.stderr.write = originals.stderr;
    for (const s of spies) s.mockRestore();
    logger.setLogLevel('SILENT' as 'INFO');
  });

  it('never logs an API key, an Authorization header or a debtor e-mail, through a whole session of requests', async () => {
    const partner: Partner = await newPartner();
    const secondKey = await accounts().createKey(partner.companyId, ['cases:read']);
    const fileKey = await uploadInvoice(partner.apiKey);
    const email = `leak-check-${Date.now()}@debtor.example`;
    const batch = { cases: [validCase(fileKey, { debtorEmail: email, invoiceRef: 'LEAK-1' }), validCase(fileKey, { debtorEmail: email, invoiceRef: 'LEAK-1' }), validCase(fileKey, { debtorEmail: 'not-an-email' })] };
    const created = outcome(await postCases(partner.apiKey, batch, { 'Idempotency-Key': 'leak-1' }));
    await postCases(partner.apiKey, batch, { 'Idempotency-Key': 'leak-1' });
    await readCase(partner.apiKey, created.created[0]!.id);
    await readCase(secondKey.apiKey, created.created[0]!.id);
    await postCases(secondKey.apiKey, batch);
    await accounts().revokeKey(secondKey.keyId);
    await readCase(secondKey.apiKey, created.created[0]!.id);
    await postCases(`${partner.apiKey}x`, batch);

    // A storage failure, so the error path (with its server-side stack) is logged too.
    const { client } = faultyDocumentClient({ decide: (name, input) => (name === 'UpdateItemCommand' && JSON.stringify(input.Key).includes('COUNTER') ? 'internal' : undefined) });
    const failing = buildCreateCasesHandler({ ...defaultCreateCasesDeps(), references: new DynamoReferenceAllocator(client, config().tableName), writer: new DynamoCaseWriter(client, config().tableName) });
    const failed = await postCases(partner.apiKey, { cases: [validCase(fileKey, { debtorEmail: email, invoiceRef: 'LEAK-2' })] }, {}, failing);
    expect(failed.statusCode).toBe(500);

    const text = lines.join('\n');
    expect(text.length).toBeGreaterThan(0);
    expect(text).toContain('request completed');
    const secrets = [partner.apiKey, secondKey.apiKey, partner.apiKey.split('_')[2]!.slice(0, 43), secondKey.apiKey.split('_')[2]!.slice(0, 43)];
    for (const secret of secrets) {
      expect(text).not.toContain(secret);
      leakChecks++;
    }
    expect(text).not.toMatch(/Bearer\s+pca_/i);
    leakChecks++;
    const infoLines = text.split('\n').filter((l) => /"level":"(INFO|WARN|ERROR)"/.test(l) || !l.includes('"level"'));
    expect(infoLines.join('\n')).not.toContain(email);
    leakChecks++;
    // Error bodies carry no stack trace and no table or bucket name.
    const body = JSON.stringify(failed.body);
    expect(body).not.toMatch(/\bat .+:\d+|partner-case-api-local|partner-case-api-invoices-local|COUNTER|Error:/);
    leakChecks++;
  });
});

describe('resource limits', () => {
  let partner: Partner;
  let fileKey: string;
  beforeAll(async () => {
    partner = await newPartner();
    fileKey = await uploadInvoice(partner.apiKey);
  });

  it('refuses 1 MiB + 1 byte with 413 and still parses exactly 1 MiB', async () => {
    const pad = (size: number) => {
      const head = '{"cases":[],"pad":"';
      return `${head}${'x'.repeat(size - head.length - 2)}"}`;
    };
    const over = await postCases(partner.apiKey, pad(1024 * 1024 + 1));
    expect([over.statusCode, over.body.code]).toEqual([413, 'PAYLOAD_TOO_LARGE']);
    const exact = await postCases(partner.apiKey, pad(1024 * 1024));
    expect(exact.statusCode).toBe(400); // parsed, then refused for its unknown field
    limitChecks += 2;
  });

  it('refuses 101 cases with BATCH_TOO_LARGE', async () => {
    const res = await postCases(partner.apiKey, { cases: Array.from({ length: 101 }, () => validCase(fileKey)) });
    expect([res.statusCode, res.body.code]).toEqual([400, 'BATCH_TOO_LARGE']);
    limitChecks++;
  });

  it('accepts 100 cases with every field at its maximum size, well within the Lambda memory setting', async () => {
    const local = '.'.repeat(0) + 'm'.repeat(64);
    const email = `${local}@${'d'.repeat(63)}.${'e'.repeat(63)}.${'f'.repeat(254 - 64 - 1 - 63 - 1 - 63 - 1 - 3)}.uk`.slice(0, 254);
    const cases = Array.from({ length: 100 }, (_, i) =>
      validCase(fileKey, {
        debtorName: 'N'.repeat(300),
        debtorEmail: email,
        invoiceRef: `${String(i).padStart(3, '0')}-${'R'.repeat(96)}`,
        principalAmount: 10000,
        debtorCompanyNo: '12345678',
        debtorAddress: 'A'.repeat(500),
        description: 'D'.repeat(2000),
        attestation: { b2b: true, under10k: true, within6years: true, undisputed: true, attestedBy: 'B'.repeat(200) },
      }),
    );
    const body = JSON.stringify({ cases });
    expect(Buffer.byteLength(body)).toBeLessThan(1024 * 1024);
    const before = process.memoryUsage();
    const res = await postCases(partner.apiKey, body);
    const after = process.memoryUsage();
    expect(res.statusCode).toBe(201);
    expect(outcome(res).created).toHaveLength(100);
    const limitBytes = DEFAULT_STACK_CONFIG.createCasesMemoryMb * 1024 * 1024;
    expect(after.rss).toBeLessThan(limitBytes);
    expect(after.heapUsed - before.heapUsed).toBeLessThan(128 * 1024 * 1024);
    console.log(`100 maximal cases: ${Buffer.byteLength(body)} bytes of JSON; heap +${Math.round((after.heapUsed - before.heapUsed) / 1048576)} MB; rss ${Math.round(after.rss / 1048576)} MB (limit ${DEFAULT_STACK_CONFIG.createCasesMemoryMb} MB)`);
    limitChecks++;
  });
});
