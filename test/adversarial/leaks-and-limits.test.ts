import type { APIGatewayProxyResult } from 'aws-lambda';
import { DEFAULT_STACK_CONFIG } from '../../infra/contract/stack-config.js';
import { generateApiKey } from '../../lib/auth/api-key.js';
import { logger } from '../../lib/runtime/logger.js';
import { config } from '../../lib/runtime/config.js';
import { DynamoCaseWriter } from '../../lib/adapters/dynamodb/case-writer.js';
import { RecordedInvoiceFiles } from '../../lib/adapters/recorded-invoice-files.js';
import { DynamoIdempotencyStore } from '../../lib/adapters/dynamodb/idempotency-store.js';
import { DynamoReferenceAllocator } from '../../lib/adapters/dynamodb/reference-allocator.js';
import { S3InvoiceFileStore } from '../../lib/adapters/s3/invoice-file-store.js';
import { handler as createCases, buildCreateCasesHandler } from '../../functions/create-cases.js';
import { caseCreationAdapters } from '../../lib/adapters/production-adapters.js';
import { handler as createUpload } from '../../functions/create-upload.js';
import { handler as getCase } from '../../functions/get-case.js';
import { accounts, apiEvent, lambdaContext, newPartner, parse, type Partner } from '../support/fixtures.js';
import { createEvent, outcome, postCases, uploadInvoice, validCase } from '../support/cases.js';
import { faultyDocumentClient, faultyS3Client } from '../support/faulty-client.js';
import { recordCounts } from './summary.js';

/** Lambda's limit on a synchronous response; a larger answer reaches the partner as a 5xx. */
const LAMBDA_RESPONSE_LIMIT_BYTES = 6 * 1024 * 1024;
const INTERNAL_NAMES = /partner-case-api-local|partner-case-api-invoices-local/;
const STACK_TRACE = /\bat .+:\d+:\d+|\bat (async )?[\w.<>]+ \(|Error: |node_modules|\/work\//;

let leakChecks = 0;
let limitChecks = 0;
afterAll(() => {
  recordCounts('leaks-and-limits', { leakChecks, limitChecks });
  console.log(`leaks: ${leakChecks} checks; limits: ${limitChecks} checks`);
});

describe('logs and error bodies leak nothing', () => {
  /** One entry per console call; the logger (POWERTOOLS_DEV) writes one JSON document per call. */
  const entries: { level: string; text: string }[] = [];
  const originals = { stdout: process.stdout.write.bind(process.stdout), stderr: process.stderr.write.bind(process.stderr) };
  const consoleMethods = ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const;
  const spies: jest.SpyInstance[] = [];
  const capture = (text: string, fallbackLevel: string) => {
    let level = fallbackLevel;
    try {
      level = String((JSON.parse(text) as { level?: unknown }).level ?? fallbackLevel).toUpperCase();
    } catch {
      // Not a log document: counted at the level of the call.
    }
    entries.push({ level, text });
  };

  beforeAll(() => {
    logger.setLogLevel('DEBUG');
    process.stdout.write = ((chunk: unknown) => (capture(String(chunk), 'INFO'), true)) as typeof process.stdout.write;
    process.stderr.write = ((chunk: unknown) => (capture(String(chunk), 'ERROR'), true)) as typeof process.stderr.write;
    for (const m of consoleMethods) {
      const level = m === 'log' || m === 'trace' ? 'INFO' : m.toUpperCase();
      spies.push(jest.spyOn(console, m).mockImplementation((...args: unknown[]) => capture(args.map(String).join(' '), level)));
    }
  });

  afterAll(() => {
    process.stdout.write = originals.stdout;
    process.stderr.write = originals.stderr;
    for (const s of spies) s.mockRestore();
    logger.setLogLevel('SILENT' as 'INFO');
  });

  it('never logs a key, an Authorization header or (at INFO and above) a debtor e-mail, through a whole session, and error bodies carry no internals', async () => {
    const partner: Partner = await newPartner();
    const readOnly = await accounts().createKey(partner.companyId, ['cases:read']);
    const rotated = await accounts().rotateKey(readOnly.keyId);
    const fileKey = await uploadInvoice(partner.apiKey);
    const email = `leak-check-${Date.now()}@debtor.example`;
    const flipped = `${partner.apiKey.slice(0, -1)}${partner.apiKey.endsWith('A') ? 'B' : 'A'}`;
    const neverExisted = generateApiKey().apiKey;
    const answers: APIGatewayProxyResult[] = [];
    const call = async (p: Promise<APIGatewayProxyResult>) => {
      const res = await p;
      answers.push(res);
      return parse(res);
    };
    const cases = (headers: Record<string, string>, body: unknown, handler = createCases) => {
      const event = createEvent('unused', body, {});
      event.headers = { 'Content-Type': 'application/json', ...headers };
      event.multiValueHeaders = Object.fromEntries(Object.entries(event.headers).map(([k, v]) => [k, [v as string]]));
      return call(handler(event, lambdaContext()));
    };
    const read = (headers: Record<string, string>, id: string) =>
      call(
        getCase(
          apiEvent({ method: 'GET', path: `/api/v1/cases/${id}`, resource: '/api/v1/cases/{id}', pathParameters: { id }, headers }),
          lambdaContext(),
        ),
      );
    const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });

    // Created, duplicate, invalid, 409 replay, reads by several keys, 401s of every kind, 403, 400, 413, 415.
    const batch = {
      cases: [
        validCase(fileKey, { debtorEmail: email, invoiceRef: 'LEAK-1' }),
        validCase(fileKey, { debtorEmail: email, invoiceRef: 'LEAK-1' }),
        validCase(fileKey, { debtorEmail: `${email}x@` }),
      ],
    };
    const created = outcome(await cases(bearer(partner.apiKey), batch, createCases));
    const caseId = created.created[0]!.id;
    await cases({ ...bearer(partner.apiKey), 'Idempotency-Key': 'leak-1' }, { cases: [validCase(fileKey, { debtorEmail: email })] });
    await cases({ ...bearer(partner.apiKey), 'Idempotency-Key': 'leak-1' }, { cases: [validCase(fileKey, { debtorEmail: email })] });
    await read(bearer(partner.apiKey), caseId);
    await read({ 'X-Api-Key': readOnly.apiKey }, caseId);
    await read(bearer(rotated.apiKey), caseId);
    await cases(bearer(readOnly.apiKey), batch);
    await accounts().revokeKey(readOnly.keyId);
    for (const headers of [
      bearer(readOnly.apiKey),
      bearer(flipped),
      bearer(neverExisted),
      bearer(`${partner.apiKey}x`),
      { 'X-Api-Key': neverExisted },
      { ...bearer(partner.apiKey), 'X-Api-Key': rotated.apiKey },
      bearer('A'.repeat(64 * 1024)),
    ]) {
      await read(headers, caseId);
      await cases(headers, batch);
    }
    await cases(bearer(partner.apiKey), { cases: [], debtorEmail: email });
    await cases(bearer(partner.apiKey), `{"cases":[{"debtorEmail":"${email}"`);
    await cases({ ...bearer(partner.apiKey), 'Content-Type': 'text/plain' }, batch);
    await cases(bearer(partner.apiKey), { cases: [validCase(fileKey, { debtorEmail: email, description: 'x'.repeat(1024 * 1024) })] });
    await call(
      createUpload(
        apiEvent({
          method: 'POST',
          path: '/api/v1/uploads',
          resource: '/api/v1/uploads',
          headers: { ...bearer(partner.apiKey), 'Content-Type': 'application/json' },
          body: JSON.stringify({ fileName: email, contentType: 'text/html', contentLength: 1 }),
        }),
        lambdaContext(),
      ),
    );

    // Storage failures, so every error path (with its server-side stack) is logged too: a 500, a
    // failed HEAD, transactions that keep failing, and a claim that cannot be completed.
    const table = config().tableName;
    let counterDown = true;
    const { client } = faultyDocumentClient({
      decide: (name, input) => {
        const text = JSON.stringify(input).toUpperCase();
        // The counter is down for the first request only (references come in blocks: later requests need no counter call).
        if (name === 'UpdateItemCommand' && text.includes('COUNTER') && counterDown) return 'internal';
        if (name === 'TransactWriteItemsCommand' && text.includes('LEAK-TX')) return 'lost-response';
        if (name === 'UpdateItemCommand' && text.includes('IDEMPOTENCY#') && text.includes('#LEAK-COMPLETE')) return 'internal';
        if (name === 'BatchGetItemCommand' && text.includes('INVREF#') && text.includes('#LEAK-TX')) return 'timeout';
        return undefined;
      },
    });
    const s3 = faultyS3Client({ decide: () => 'internal' });
    const faulty = buildCreateCasesHandler({
      ...caseCreationAdapters(),
      // A block of one: the counter is written by every batch, so its fault reaches each request.
      references: new DynamoReferenceAllocator(client, table, 1),
      writer: new DynamoCaseWriter(client, table, { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2 }),
      idempotency: new DynamoIdempotencyStore(client, table),
    });
    const failed = await cases(
      bearer(partner.apiKey),
      { cases: [validCase(fileKey, { debtorEmail: email, invoiceRef: 'LEAK-2' })] },
      faulty,
    );
    // Storage failed before any write: the request had no effect and says when to retry.
    expect(failed.statusCode).toBe(503);
    counterDown = false;
    await cases(
      { ...bearer(partner.apiKey), 'Idempotency-Key': 'leak-complete' },
      { cases: [validCase(fileKey, { debtorEmail: email, invoiceRef: 'LEAK-TX' }), validCase(fileKey, { debtorEmail: email })] },
      faulty,
    );
    // A file whose upload record has not arrived yet, so the (failing) HEAD is asked.
    const noRecordYet = { recorded: () => Promise.resolve(new Set<string>()) };
    const headFailing = buildCreateCasesHandler({
      ...caseCreationAdapters(),
      files: new RecordedInvoiceFiles(noRecordYet, new S3InvoiceFileStore(s3.client, config().bucketName)),
    });
    await cases(bearer(partner.apiKey), { cases: [validCase(fileKey, { debtorEmail: email })] }, headFailing);

    const all = entries.map((e) => e.text).join('\n');
    expect(all).toContain('request completed');
    expect(entries.some((e) => e.level === 'ERROR' && e.text.includes('stack'))).toBe(true);
    // No key, presented or real, valid or not, and no secret part of one, at any level.
    for (const key of [partner.apiKey, readOnly.apiKey, rotated.apiKey, flipped, neverExisted, `${partner.apiKey}x`]) {
      expect(all).not.toContain(key);
      expect(all).not.toContain(key.split('_')[2]!.slice(0, 43));
      leakChecks += 2;
    }
    expect(all).not.toContain('A'.repeat(1024));
    expect(all).not.toMatch(/Bearer\s+\S/i);
    expect(all).not.toMatch(/authorization|x-api-key/i);
    leakChecks += 3;
    // The debtor's e-mail address at most at DEBUG.
    const infoAndAbove = entries.filter((e) => e.level !== 'DEBUG' && e.level !== 'TRACE');
    expect(infoAndAbove.length).toBeGreaterThan(answers.length);
    for (const entry of infoAndAbove) expect(entry.text).not.toContain(email.split('@')[0]);
    leakChecks += infoAndAbove.length;

    // Every error body: problem details without a stack trace, an internal name or a key.
    const errors = answers.filter((a) => a.statusCode >= 400);
    expect(new Set(errors.map((a) => a.statusCode))).toEqual(new Set([400, 401, 403, 409, 413, 415, 503]));
    for (const res of errors) {
      expect(res.headers?.['Content-Type']).toBe('application/problem+json');
      expect(res.body).not.toMatch(STACK_TRACE);
      expect(res.body).not.toMatch(INTERNAL_NAMES);
      expect(res.body).not.toMatch(/pca_[0-9A-Za-z]{8}/);
      leakChecks += 3;
    }
  });
});

describe('resource limits', () => {
  let partner: Partner;
  let fileKey: string;
  beforeAll(async () => {
    partner = await newPartner();
    fileKey = await uploadInvoice(partner.apiKey);
  });

  const pad = (size: number) => {
    const head = '{"cases":[],"pad":"';
    return `${head}${'x'.repeat(size - head.length - 2)}"}`;
  };

  it('refuses 1 MiB + 1 byte with 413 (plain and base64-encoded) and still parses exactly 1 MiB', async () => {
    const over = await postCases(partner.apiKey, pad(1024 * 1024 + 1));
    expect([over.statusCode, over.body.code]).toEqual([413, 'PAYLOAD_TOO_LARGE']);
    const exact = await postCases(partner.apiKey, pad(1024 * 1024));
    expect([exact.statusCode, exact.body.code]).toEqual([400, 'INVALID_REQUEST']); // parsed, then refused for its unknown field
    const event = createEvent(partner.apiKey, Buffer.from(pad(1024 * 1024 + 1)).toString('base64'));
    event.isBase64Encoded = true;
    const base64 = parse(await createCases(event, lambdaContext()));
    expect([base64.statusCode, base64.body.code]).toEqual([413, 'PAYLOAD_TOO_LARGE']);
    limitChecks += 3;
  });

  it('refuses 101 cases with BATCH_TOO_LARGE, creating nothing', async () => {
    const res = await postCases(
      partner.apiKey,
      { cases: Array.from({ length: 101 }, (_, i) => validCase(fileKey, { invoiceRef: `LIMIT-101-${i}` })) },
      { 'Idempotency-Key': 'limit-101' },
    );
    expect([res.statusCode, res.body.code]).toEqual([400, 'BATCH_TOO_LARGE']);
    // Nothing was created and the key was not consumed.
    const retry = await postCases(
      partner.apiKey,
      { cases: [validCase(fileKey, { invoiceRef: 'LIMIT-101-0' })] },
      { 'Idempotency-Key': 'limit-101' },
    );
    expect(retry.statusCode).toBe(201);
    limitChecks += 2;
  });

  it('accepts 100 cases with every field at its maximum size, well within the Lambda memory setting', async () => {
    const email = `${'m'.repeat(64)}@${'d'.repeat(63)}.${'e'.repeat(63)}.${'f'.repeat(58)}.uk`;
    expect(email).toHaveLength(254);
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
    global.gc?.();
    const before = process.memoryUsage();
    let peakRss = before.rss;
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 5);
    const res = await postCases(partner.apiKey, body, { 'Idempotency-Key': 'limit-100-max' });
    clearInterval(sampler);
    const after = process.memoryUsage();
    peakRss = Math.max(peakRss, after.rss);
    expect(res.statusCode).toBe(201);
    expect(outcome(res).created).toHaveLength(100);
    // The jest worker carries the test framework and whatever earlier test files (of every project, in
    // an order its timing cache decides) left behind, so its whole RSS says nothing of a Lambda's: it
    // reached 1.9 GB before this request in two runs. What this request adds is bounded here, an eighth
    // of the memory setting; a Lambda's whole peak is the bench's row "peak RSS, cold start + one
    // 100-case create" (a fresh process, ≤ 128 MB).
    const limitBytes = DEFAULT_STACK_CONFIG.createCasesMemoryMb * 1024 * 1024;
    expect(peakRss - before.rss).toBeLessThan(limitBytes / 8);
    expect(after.heapUsed - before.heapUsed).toBeLessThan(128 * 1024 * 1024);
    // The replay of that request fits in storage too.
    const again = await postCases(partner.apiKey, body, { 'Idempotency-Key': 'limit-100-max' });
    expect([again.statusCode, again.body.state]).toEqual([409, 'COMPLETED']);
    console.log(
      `100 maximal cases: ${Buffer.byteLength(body)} bytes of JSON; heap +${Math.round((after.heapUsed - before.heapUsed) / 1048576)} MB; peak rss ${Math.round(peakRss / 1048576)} MB (+${Math.round((peakRss - before.rss) / 1048576)} MB) (Lambda memory ${DEFAULT_STACK_CONFIG.createCasesMemoryMb} MB)`,
    );
    limitChecks += 4;
  });

  it('answers 1 MiB of unknown fields with a response a Lambda can return (at most 20 listed per case)', async () => {
    const base = JSON.stringify(validCase(fileKey)).slice(0, -1);
    const keys: string[] = [];
    for (let i = 0, size = base.length + 16; size < 1024 * 1024 - 16; i++) {
      const k = `"${i.toString(36)}":0`;
      keys.push(k);
      size += k.length + 1;
    }
    const body = `{"cases":[${base},${keys.join(',')}}]}`;
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(1024 * 1024);
    const res = await createCases(createEvent(partner.apiKey, body), lambdaContext());
    expect(res.statusCode).toBe(200);
    const rejected = JSON.parse(res.body).rejected as { code: string; errors: unknown[] }[];
    expect(rejected[0]!.code).toBe('INVALID_FIELD');
    expect(rejected[0]!.errors).toHaveLength(20);
    expect(Buffer.byteLength(JSON.stringify(res))).toBeLessThan(LAMBDA_RESPONSE_LIMIT_BYTES);

    const uploadBody = `{${keys.join(',')}}`;
    const upload = await createUpload(
      apiEvent({
        method: 'POST',
        path: '/api/v1/uploads',
        resource: '/api/v1/uploads',
        headers: { Authorization: `Bearer ${partner.apiKey}`, 'Content-Type': 'application/json' },
        body: uploadBody,
      }),
      lambdaContext(),
    );
    expect(upload.statusCode).toBe(400);
    expect(Buffer.byteLength(JSON.stringify(upload))).toBeLessThan(64 * 1024);
    limitChecks += 2;
  });

  // Found by this suite: the answer replayed on a 409 is stored in the claim item, and a DynamoDB
  // item holds at most 400 KB while an answer echoes every invoiceRef as submitted. Large answers
  // are now stored gzipped (lib/adapters/dynamodb/idempotency-store.ts), and compacted if still too large.
  it('replays a finished answer larger than a DynamoDB item on a repeated Idempotency-Key', async () => {
    const cases = Array.from({ length: 60 }, (_, i) => validCase(fileKey, { invoiceRef: `${i}-${'R'.repeat(8000)}` }));
    const first = await postCases(partner.apiKey, { cases }, { 'Idempotency-Key': 'limit-large-answer' });
    expect(first.statusCode).toBe(200);
    const again = await postCases(partner.apiKey, { cases }, { 'Idempotency-Key': 'limit-large-answer' });
    expect([again.statusCode, again.body.state]).toEqual([409, 'COMPLETED']);
    expect(again.body.rejected).toEqual(first.body.rejected);
  });
});
