/**
 * `npm run smoke -- --base-url URL --api-key KEY`: proves a running stack (a deployed one after
 * `cdk deploy`, or `npm start`) does the partner's whole path, over plain HTTP with `fetch` only:
 *
 *   a bad key is refused (401) → an upload URL is issued → the file is PUT with exactly the
 *   returned headers → a case is created with an Idempotency-Key → read back → the same key
 *   replayed (409 carrying the original result) → one rejection of every kind that can be
 *   provoked without side effects → an unknown case id answers 404.
 *
 * Run it with a test-mode key (`pca_test_…`, product rules "Test mode"): its case is then a
 * sandbox case (livemode false) that never enters recovery; the read-back checks that `livemode`
 * matches the key's mode. CI's smoke step uses the demo test key of `npm start`.
 *
 * One `PASS`/`FAIL` line per step; exit 0 when all pass, 1 when any fails, 2 for bad arguments.
 * Every invoiceRef starts with `SMOKE-<timestamp>-`, so the one case it creates (and the upload it
 * leaves) are recognisable in a live table. Neither the key nor the presigned URL (a credential
 * while it lasts) is ever printed. `--api-key-file PATH` (or `API_KEY` in the environment) keeps
 * the key out of the process list.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { KEY_PREFIXES } from '../../lib/auth/api-key.js';

class UsageError extends Error {}

const USAGE = 'usage: npm run smoke -- --base-url URL (--api-key KEY | --api-key-file PATH | API_KEY in the environment)';

interface Options {
  baseUrl: string;
  apiKey: string;
}

/** The options, or undefined for --help. */
function options(argv: string[], env: NodeJS.ProcessEnv): Options | undefined {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      options: {
        'base-url': { type: 'string' },
        'api-key': { type: 'string' },
        'api-key-file': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    throw new UsageError((error as Error).message.split('\n')[0] ?? 'bad arguments');
  }
  if (values.help) return undefined;
  const rawBase = values['base-url'];
  if (!rawBase) throw new UsageError(`missing --base-url; ${USAGE}`);
  if (!URL.canParse(rawBase) || !/^https?:$/.test(new URL(rawBase).protocol))
    throw new UsageError(`--base-url is not an http(s) URL: "${rawBase}"`);
  let apiKey = values['api-key'];
  if (values['api-key-file']) {
    try {
      apiKey = readFileSync(values['api-key-file'], 'utf8').trim();
    } catch (error) {
      throw new UsageError(`cannot read --api-key-file: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
  }
  apiKey ||= env.API_KEY;
  if (!apiKey) throw new UsageError(`no API key; ${USAGE}`);
  // The stage URL (CDK output ApiUrl) ends in "/"; routes are appended to it either way.
  return { baseUrl: rawBase.replace(/\/+$/, ''), apiKey };
}

/** A failed expectation inside a step; its message is printed after FAIL. */
class StepFailure extends Error {}

function expect(condition: unknown, message: string): asserts condition {
  if (!condition) throw new StepFailure(message);
}

interface Reply {
  status: number;
  body: Record<string, unknown>;
}

/** What to print about an unexpected answer: the status and the problem code, nothing else. */
function describe(reply: Reply): string {
  const code = typeof reply.body.code === 'string' ? ` ${reply.body.code}` : '';
  const detail = typeof reply.body.detail === 'string' ? `: ${reply.body.detail.slice(0, 200)}` : '';
  return `HTTP ${reply.status}${code}${detail}`;
}

const PDF = Buffer.from('%PDF-1.4\n% Partner Case API smoke test invoice\n%%EOF\n');

async function runSmoke(opts: Options, print: (line: string) => void = console.log): Promise<boolean> {
  const stamp = new Date()
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  const run = `SMOKE-${stamp}-${randomBytes(3).toString('hex')}`;
  const auth = { Authorization: `Bearer ${opts.apiKey}` };
  let failures = 0;

  const call = async (method: string, path: string, init: { headers?: Record<string, string>; body?: unknown } = {}): Promise<Reply> => {
    const res = await fetch(`${opts.baseUrl}${path}`, {
      method,
      headers: { ...auth, ...(init.body === undefined ? {} : { 'Content-Type': 'application/json' }), ...init.headers },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    let body: Record<string, unknown> = {};
    try {
      const parsed = JSON.parse(text) as unknown;
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) body = parsed as Record<string, unknown>;
    } catch {
      // Not JSON: the step's own checks report what was expected.
    }
    return { status: res.status, body };
  };

  const step = async (name: string, body: () => Promise<string | void>): Promise<boolean> => {
    try {
      const note = await body();
      print(`PASS  ${name}${note ? `  (${note})` : ''}`);
      return true;
    } catch (error) {
      failures++;
      const reason = error instanceof StepFailure ? error.message : `${(error as Error).name}: ${(error as Error).message}`;
      print(`FAIL  ${name}: ${reason}`);
      return false;
    }
  };
  const skip = (name: string, because: string) => {
    failures++;
    print(`FAIL  ${name}: not run, ${because}`);
  };

  const validCase = (invoiceRef: string, invoiceFileKey: string, overrides: Record<string, unknown> = {}) => ({
    debtorName: 'Smoke Test Debtor Ltd',
    debtorEmail: 'accounts@smoke-test.example',
    invoiceRef,
    invoiceDate: '2025-01-10',
    dueDate: '2025-02-10',
    principalAmount: 12.34,
    invoiceFileKey,
    description: 'Created by npm run smoke; not a real claim.',
    attestation: { b2b: true, under10k: true, within6years: true, undisputed: true, attestedBy: 'Smoke Test' },
    ...overrides,
  });

  print(`Smoke test of ${opts.baseUrl} (invoiceRefs start with ${run}-)`);

  await step('a bad API key is refused with 401 UNAUTHENTICATED', async () => {
    const reply = await call('GET', '/api/v1/cases/case_0000000000000000000000', {
      headers: { Authorization: 'Bearer pca_smoke_test_not_a_key' },
    });
    expect(reply.status === 401 && reply.body.code === 'UNAUTHENTICATED', `expected 401 UNAUTHENTICATED, got ${describe(reply)}`);
  });

  let fileKey: string | undefined;
  let upload: { uploadUrl: string; method: string; headers: Record<string, string> } | undefined;
  await step('POST /api/v1/uploads issues a presigned PUT', async () => {
    const reply = await call('POST', '/api/v1/uploads', {
      body: { fileName: `${run}.pdf`, contentType: 'application/pdf', contentLength: PDF.length },
    });
    expect(reply.status === 201, `expected 201, got ${describe(reply)}`);
    const { fileKey: key, uploadUrl, method, headers } = reply.body;
    expect(
      typeof key === 'string' && typeof uploadUrl === 'string' && method === 'PUT' && headers && typeof headers === 'object',
      'the answer lacks fileKey, uploadUrl, method PUT or headers',
    );
    fileKey = key;
    upload = { uploadUrl, method, headers: headers as Record<string, string> };
    return key;
  });

  let uploaded = false;
  if (upload) {
    const { uploadUrl, headers } = upload;
    uploaded = await step('PUT of the file to the presigned URL with exactly the returned headers', async () => {
      const res = await fetch(uploadUrl, { method: 'PUT', headers, body: PDF, signal: AbortSignal.timeout(30_000) });
      await res.arrayBuffer();
      expect(res.ok, `expected 2xx from storage, got HTTP ${res.status}`);
    });
  } else skip('PUT of the file to the presigned URL with exactly the returned headers', 'no upload URL');

  const idempotencyKey = `${run}-create`;
  const createBody = fileKey ? { cases: [validCase(`${run}-CREATED`, fileKey)] } : undefined;
  let created: { id: string; reference: string } | undefined;
  let createdResult: Record<string, unknown> | undefined;
  if (createBody && uploaded) {
    await step('POST /api/v1/cases with an Idempotency-Key creates the case (201)', async () => {
      const reply = await call('POST', '/api/v1/cases', { headers: { 'Idempotency-Key': idempotencyKey }, body: createBody });
      const first = Array.isArray(reply.body.created)
        ? (reply.body.created[0] as { id?: unknown; reference?: unknown } | undefined)
        : undefined;
      const rejected = Array.isArray(reply.body.rejected) ? (reply.body.rejected as { code?: unknown }[]) : [];
      expect(
        reply.status === 201 && first && typeof first.id === 'string',
        `expected 201 with one created case, got ${describe(reply)}${rejected.length ? ` rejected ${rejected.map((r) => String(r.code)).join(',')}` : ''}`,
      );
      created = { id: first.id as string, reference: String(first.reference) };
      createdResult = reply.body;
      return `${created.id}, ${created.reference}`;
    });
  } else skip('POST /api/v1/cases with an Idempotency-Key creates the case (201)', 'the upload did not succeed');

  if (created) {
    const { id } = created;
    await step('GET /api/v1/cases/{id} reads it back as DRAFT, livemode matching the key', async () => {
      const reply = await call('GET', `/api/v1/cases/${encodeURIComponent(id)}`);
      expect(reply.status === 200, `expected 200, got ${describe(reply)}`);
      expect(
        reply.body.id === id && reply.body.status === 'DRAFT' && reply.body.principalAmount === '12.34' && reply.body.currency === 'GBP',
        `unexpected record: id ${String(reply.body.id)}, status ${String(reply.body.status)}, principalAmount ${String(reply.body.principalAmount)}`,
      );
      const livemode = !opts.apiKey.startsWith(KEY_PREFIXES.test);
      expect(reply.body.livemode === livemode, `expected livemode ${String(livemode)} for this key, got ${String(reply.body.livemode)}`);
      return livemode ? 'live mode' : 'test mode';
    });
    await step('the same Idempotency-Key again answers 409 with the original result', async () => {
      const reply = await call('POST', '/api/v1/cases', { headers: { 'Idempotency-Key': idempotencyKey }, body: createBody });
      expect(
        reply.status === 409 && reply.body.code === 'IDEMPOTENCY_KEY_REUSED',
        `expected 409 IDEMPOTENCY_KEY_REUSED, got ${describe(reply)}`,
      );
      expect(
        JSON.stringify(reply.body.created) === JSON.stringify(createdResult?.created),
        'the 409 does not carry the original created items',
      );
    });
  } else {
    skip('GET /api/v1/cases/{id} reads it back as DRAFT', 'no case was created');
    skip('the same Idempotency-Key again answers 409 with the original result', 'no case was created');
  }

  // One case per rejection kind, each failing only its own rule, in one batch that creates
  // nothing. FILE_NOT_UPLOADED needs a key of this company that was issued but never used.
  const rejections: [code: string, cause: string, make: (ref: string, file: string, missingFile: string) => Record<string, unknown>][] = [
    ['INVALID_FIELD', 'a malformed debtorEmail', (ref, file) => validCase(ref, file, { debtorEmail: 'not-an-email-address' })],
    [
      'ATTESTATION_FAILED',
      'undisputed: false',
      (ref, file) =>
        validCase(ref, file, {
          attestation: { b2b: true, under10k: true, within6years: true, undisputed: false, attestedBy: 'Smoke Test' },
        }),
    ],
    ['AMOUNT_OUT_OF_RANGE', 'principalAmount 10000.01', (ref, file) => validCase(ref, file, { principalAmount: 10000.01 })],
    [
      'INVOICE_DATE_AFTER_DUE_DATE',
      'invoiceDate after dueDate',
      (ref, file) => validCase(ref, file, { invoiceDate: '2025-03-01', dueDate: '2025-02-10' }),
    ],
    ['DUE_DATE_NOT_PAST', 'dueDate in 2099', (ref, file) => validCase(ref, file, { dueDate: '2099-01-01' })],
    ['INVALID_FILE_KEY', 'a traversal fileKey', (ref) => validCase(ref, 'invoices/../smoke-test.pdf')],
    ['FILE_NOT_UPLOADED', 'an issued fileKey never uploaded', (ref, _file, missingFile) => validCase(ref, missingFile)],
    ['OUT_OF_JURISDICTION', 'a Scottish company number', (ref, file) => validCase(ref, file, { debtorCompanyNo: 'SC123456' })],
    ['DUPLICATE', 'the invoiceRef just created', (_ref, file) => validCase(`${run}-CREATED`, file)],
  ];
  let batch: Reply | undefined;
  if (fileKey && created) {
    const file = fileKey;
    try {
      const unused = await call('POST', '/api/v1/uploads', {
        body: { fileName: `${run}-never-uploaded.pdf`, contentType: 'application/pdf', contentLength: PDF.length },
      });
      const missingFile = typeof unused.body.fileKey === 'string' ? unused.body.fileKey : undefined;
      if (missingFile) {
        const cases = rejections.map(([code, , make]) => make(`${run}-${code}`, file, missingFile));
        batch = await call('POST', '/api/v1/cases', { body: { cases } });
      } else print(`      (a second upload URL, for FILE_NOT_UPLOADED, was refused: ${describe(unused)})`);
    } catch (error) {
      print(`      (the rejection batch failed: ${(error as Error).name}: ${(error as Error).message})`);
    }
  }
  for (const [index, [code, cause]] of rejections.entries()) {
    const name = `rejected ${code}: ${cause}`;
    if (!batch) {
      skip(name, created ? 'the rejection batch could not be sent' : 'no case was created to collide with');
      continue;
    }
    const reply = batch;
    await step(name, async () => {
      expect(reply.status === 200, `expected 200 (nothing created) for the rejection batch, got ${describe(reply)}`);
      const rejected = (Array.isArray(reply.body.rejected) ? reply.body.rejected : []) as {
        index?: unknown;
        code?: unknown;
        message?: unknown;
      }[];
      const item = rejected.find((r) => r.index === index);
      expect(item, `case ${index} is not in rejected`);
      expect(item.code === code, `rejected as ${String(item.code)}`);
      expect(typeof item.message === 'string' && item.message.length > 0, 'the rejection has no message');
    });
  }

  await step('an unknown case id answers 404 NOT_FOUND', async () => {
    const reply = await call('GET', `/api/v1/cases/case_${randomBytes(16).toString('hex').slice(0, 22)}`);
    expect(reply.status === 404 && reply.body.code === 'NOT_FOUND', `expected 404 NOT_FOUND, got ${describe(reply)}`);
  });

  print(failures === 0 ? 'Smoke test passed.' : `Smoke test FAILED: ${failures} step(s) failed.`);
  return failures === 0;
}

async function main(): Promise<number> {
  let opts: Options | undefined;
  try {
    opts = options(process.argv.slice(2), process.env);
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(`smoke: ${error.message}`);
      return 2;
    }
    throw error;
  }
  if (!opts) {
    console.log(USAGE);
    return 0;
  }
  return (await runSmoke(opts)) ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`smoke: ${(error as Error).name}: ${(error as Error).message}`);
    process.exit(1);
  },
);
