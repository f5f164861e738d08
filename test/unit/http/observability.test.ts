import type { Deadline } from '../../../lib/deadline.js';
import type { CreateCasesHandlerDeps } from '../../../functions/create-cases.js';
import type { NewCase, WriteOutcome } from '../../../lib/cases/ports.js';
import type { AppConfig } from '../../../lib/runtime/config.js';
import { validCase } from '../../support/case-inputs.js';
import { referenceRateGap } from '../../support/reference-rate-gap.js';
import { apiEvent, bearer, lambdaContext, parse } from '../../support/fixtures.js';

/**
 * What operators see of a request besides its response: the CloudWatch metrics (Powertools EMF
 * documents on stdout, as in Lambda) and the X-Ray instrumentation. Each test loads the modules
 * afresh (`jest.isolateModulesAsync`) so the process-wide metrics and tracer are new, as at a
 * cold start, and built under the environment the test gives.
 */

type Env = Record<string, string | undefined>;

/**
 * As a deployed function: metrics on, written to stdout by Powertools' own console. Kept for the
 * whole test, not only while loading: Powertools builds the cold-start metric's own instance
 * during the first invocation, from the environment of that moment.
 */
const LAMBDA_METRICS_ENV: Env = {
  POWERTOOLS_DEV: undefined,
  POWERTOOLS_METRICS_DISABLED: 'false',
  // Lambda sets it; Powertools counts a cold start only for an on-demand environment.
  AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
};

/** Sets `env`; returns what puts the previous values back. */
function setEnv(env: Env): () => void {
  const saved: Env = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  const apply = (values: Env) => {
    for (const [k, v] of Object.entries(values)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
  apply(env);
  return () => apply(saved);
}

async function loadIsolated<T>(env: Env, load: () => Promise<T>): Promise<T> {
  const restore = setEnv(env);
  try {
    let loaded: T | undefined;
    await jest.isolateModulesAsync(async () => {
      loaded = await load();
    });
    return loaded as T;
  } finally {
    restore();
  }
}

interface EmfDocument {
  namespace: string;
  dimensions: string[][];
  metrics: Record<string, unknown>;
  properties: Record<string, unknown>;
}

/** Runs `invoke` and returns the EMF documents written to stdout meanwhile. */
async function emfWrittenBy(invoke: () => Promise<unknown>): Promise<EmfDocument[]> {
  const lines: string[] = [];
  const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(...String(chunk).split('\n').filter(Boolean));
    return true;
  });
  try {
    await invoke();
  } finally {
    write.mockRestore();
  }
  return lines
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((doc) => '_aws' in doc)
    .map((doc) => {
      const { _aws, ...rest } = doc as {
        _aws: { CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string }[] }[] };
      };
      const directive = _aws.CloudWatchMetrics[0]!;
      const names = new Set(directive.Metrics.map((m) => m.Name));
      const entries = Object.entries(rest);
      return {
        namespace: directive.Namespace,
        dimensions: directive.Dimensions,
        metrics: Object.fromEntries(entries.filter(([k]) => names.has(k))),
        properties: Object.fromEntries(entries.filter(([k]) => !names.has(k))),
      };
    });
}

async function partnerKey(mode: 'live' | 'test' = 'live') {
  const { generateApiKey } = await import('../../../lib/auth/api-key.js');
  const generated = generateApiKey(mode);
  const record = {
    keyId: generated.keyId,
    companyId: 'cmp_AAAAAAAAAAAAAAAA',
    scopes: ['cases:read', 'cases:write'] as ('cases:read' | 'cases:write')[],
    mode,
    secretHash: generated.secretHash,
    revoked: false,
    createdAt: new Date().toISOString(),
  };
  return { apiKey: generated.apiKey, record };
}

/** The create-cases chain over in-memory ports; writes of invoiceRefs named in `failures` fail so. */
async function loadCreateCases(failures: Record<string, WriteOutcome>, mode: 'live' | 'test' = 'live') {
  return loadIsolated(LAMBDA_METRICS_ENV, async () => {
    const { buildCreateCasesHandler } = await import('../../../functions/create-cases.js');
    const memory = await import('../../support/memory-stores.js');
    const { fileKeyProblem, issueFileKey } = await import('../../../lib/uploads/file-key.js');
    const { apiKey, record } = await partnerKey(mode);
    const keys = new memory.MemoryApiKeyStore();
    keys.records.set(record.keyId, record);
    const writer = new memory.MemoryCaseWriter();
    const realWrite = writer.write.bind(writer);
    writer.write = async (c: NewCase, deadline?: Deadline) => failures[c.stored.invoiceRef] ?? realWrite(c, deadline);
    const files = new memory.MemoryFileStore();
    const fileKey = issueFileKey(record.companyId, 'application/pdf', undefined, mode);
    files.keys.add(fileKey);
    const brokenFileKey = issueFileKey(record.companyId, 'application/pdf', undefined, mode);
    files.exists = async (key) => {
      if (key === brokenFileKey) throw new Error('AccessDenied');
      return key === fileKey;
    };
    const deps: CreateCasesHandlerDeps = {
      keys,
      companies: new memory.MemoryCompanyStore(),
      writer,
      idempotency: new memory.MemoryIdempotencyStore(),
      references: new memory.MemoryReferenceAllocator(),
      files,
      log: memory.silentLog,
      fileKeyProblem,
      now: () => new Date(),
      idempotencyTtlSeconds: 86_400,
      claimHorizonSeconds: 20,
    };
    const handler = buildCreateCasesHandler(deps);
    const post = async (cases: unknown[], key = apiKey) =>
      parse(
        await handler(
          apiEvent({
            method: 'POST',
            path: '/api/v1/cases',
            resource: '/api/v1/cases',
            headers: { ...bearer(key), 'Content-Type': 'application/json' },
            body: JSON.stringify({ cases }),
          }),
          lambdaContext(),
        ),
      );
    return { post, fileKey, brokenFileKey };
  });
}

const SERVICE = { namespace: 'PartnerCaseApi', service: 'partner-case-api' };
const caseMetricsOf = (docs: EmfDocument[]) => docs.filter((d) => 'CasesSubmitted' in d.metrics);
const coldStartsOf = (docs: EmfDocument[]) => docs.filter((d) => 'ColdStart' in d.metrics);

describe('metrics every route publishes', () => {
  let restoreEnv: () => void;
  beforeEach(() => {
    restoreEnv = setEnv(LAMBDA_METRICS_ENV);
  });
  afterEach(() => restoreEnv());

  it("publishes the cold start once, on the process's first request, and each request's case metrics exactly once", async () => {
    const { post, fileKey } = await loadCreateCases({});

    const first = await emfWrittenBy(() => post([validCase(fileKey, { invoiceRef: 'M-1' })]));
    expect(first).toHaveLength(2);
    expect(coldStartsOf(first)).toEqual([
      {
        namespace: SERVICE.namespace,
        dimensions: [['service', 'function_name']],
        metrics: { ColdStart: 1 },
        properties: { service: SERVICE.service, function_name: 'test' },
      },
    ]);
    expect(caseMetricsOf(first)).toEqual([
      {
        namespace: SERVICE.namespace,
        // The service dimension alone: the alarms and the dashboard read exactly this.
        dimensions: [['service']],
        metrics: { CasesSubmitted: 1, CasesCreated: 1, CasesRejected: 0, CasesTemporaryFailure: 0, CaseWriteOutcomeUnknown: 0 },
        properties: { service: SERVICE.service },
      },
    ]);

    const second = await emfWrittenBy(() => post([validCase(fileKey, { invoiceRef: 'M-2' }), validCase(fileKey, { invoiceRef: 'M-3' })]));
    expect(coldStartsOf(second)).toEqual([]);
    expect(caseMetricsOf(second).map((d) => d.metrics)).toEqual([
      { CasesSubmitted: 2, CasesCreated: 2, CasesRejected: 0, CasesTemporaryFailure: 0, CaseWriteOutcomeUnknown: 0 },
    ]);
    expect(second).toHaveLength(1);
  });

  it('a refused request publishes nothing of its own and nothing left over from an earlier one', async () => {
    const { post, fileKey } = await loadCreateCases({});
    await emfWrittenBy(() => post([validCase(fileKey)]));
    let status = 0;
    const refused = await emfWrittenBy(async () => {
      status = (await post([validCase(fileKey)], 'pk_live_not-a-key')).statusCode;
    });
    expect(status).toBe(401);
    expect(refused).toEqual([]);
  });

  it('CaseWriteOutcomeUnknown counts only the rejections whose write outcome storage could not confirm', async () => {
    const { post, fileKey, brokenFileKey } = await loadCreateCases({
      'KNOWN-FAIL': { kind: 'failed', attempts: 5, error: 'ThrottlingException' },
      'LOST-1': { kind: 'failed', attempts: 5, error: 'TimeoutError', outcomeUnknown: true },
    });
    let rejected: { index: number; code: string }[] = [];
    const docs = await emfWrittenBy(async () => {
      const res = await post([
        validCase(fileKey, { invoiceRef: 'KNOWN-FAIL' }),
        validCase(fileKey, { invoiceRef: 'LOST-1' }),
        // The in-request twin of the unconfirmed case: its fate is that write's, unknown too.
        validCase(fileKey, { invoiceRef: 'lost-1' }),
        // TEMPORARY_FAILURE because the file check failed: nothing was written, the outcome is known.
        validCase(brokenFileKey, { invoiceRef: 'FILE-CHECK' }),
        validCase(fileKey, { invoiceRef: 'CREATED' }),
        validCase(fileKey, { invoiceRef: 'BAD-AMOUNT', principalAmount: 0 }),
      ]);
      rejected = (res.body.rejected as { index: number; code: string }[]).map(({ index, code }) => ({ index, code }));
    });
    expect(rejected).toEqual([
      { index: 0, code: 'TEMPORARY_FAILURE' },
      { index: 1, code: 'TEMPORARY_FAILURE' },
      { index: 2, code: 'TEMPORARY_FAILURE' },
      { index: 3, code: 'TEMPORARY_FAILURE' },
      { index: 5, code: 'AMOUNT_OUT_OF_RANGE' },
    ]);
    expect(caseMetricsOf(docs).map((d) => d.metrics)).toEqual([
      { CasesSubmitted: 6, CasesCreated: 1, CasesRejected: 5, CasesTemporaryFailure: 4, CaseWriteOutcomeUnknown: 2 },
    ]);
  });

  it('a test key rehearsing TEMPORARY_FAILURE pages no one: CasesTemporaryFailure counts storage failures only', async () => {
    const { post, fileKey, brokenFileKey } = await loadCreateCases({}, 'test');
    let rejected: { index: number; code: string }[] = [];
    const docs = await emfWrittenBy(async () => {
      const res = await post([
        validCase(fileKey, { invoiceRef: 'SIMULATE-TEMPORARY-FAILURE-1' }),
        validCase(fileKey, { invoiceRef: 'SIMULATE-TEMPORARY-FAILURE-2' }),
        // A real storage failure in test mode still counts: the store is every company's.
        validCase(brokenFileKey, { invoiceRef: 'FILE-CHECK' }),
        validCase(fileKey, { invoiceRef: 'CREATED' }),
      ]);
      rejected = (res.body.rejected as { index: number; code: string }[]).map(({ index, code }) => ({ index, code }));
    });
    expect(rejected).toEqual([
      { index: 0, code: 'TEMPORARY_FAILURE' },
      { index: 1, code: 'TEMPORARY_FAILURE' },
      { index: 2, code: 'TEMPORARY_FAILURE' },
    ]);
    expect(caseMetricsOf(docs).map((d) => d.metrics)).toEqual([
      { CasesSubmitted: 4, CasesCreated: 1, CasesRejected: 3, CasesTemporaryFailure: 1, CaseWriteOutcomeUnknown: 0 },
    ]);
  });

  it('routes without case metrics publish only the cold start, and say nothing louder than DEBUG about it', async () => {
    const loaded = await loadIsolated(LAMBDA_METRICS_ENV, async () => {
      const { buildGetCaseHandler } = await import('../../../functions/get-case.js');
      const { logger } = await import('../../../lib/runtime/logger.js');
      const memory = await import('../../support/memory-stores.js');
      const { apiKey, record } = await partnerKey();
      const keys = new memory.MemoryApiKeyStore();
      keys.records.set(record.keyId, record);
      return { handler: buildGetCaseHandler({ keys, caseReader: new memory.MemoryCaseWriter() }), logger, apiKey };
    });
    const warn = jest.spyOn(loaded.logger, 'warn');
    const debug = jest.spyOn(loaded.logger, 'debug');
    const read = () =>
      loaded.handler(
        apiEvent({
          method: 'GET',
          path: '/api/v1/cases/x',
          resource: '/api/v1/cases/{id}',
          pathParameters: { id: 'case_0000000000000000000000' },
          headers: bearer(loaded.apiKey),
        }),
        lambdaContext(),
      );
    const first = await emfWrittenBy(read);
    const second = await emfWrittenBy(read);
    expect(first.map((d) => Object.keys(d.metrics))).toEqual([['ColdStart']]);
    expect(second).toEqual([]);
    expect(warn).not.toHaveBeenCalled();
    expect(debug).toHaveBeenCalledWith(expect.stringContaining('No application metrics to publish'));
  });
});

/**
 * create-cases, get-case and list-cases over one in-memory store, on a day some months into the
 * first half-year the reference-rate table has no rate for.
 */
async function loadCaseRoutes() {
  const gap = referenceRateGap();
  const now = new Date(`${gap.dayAfter(120)}T12:00:00Z`);
  return loadIsolated(LAMBDA_METRICS_ENV, async () => {
    const { buildCreateCasesHandler } = await import('../../../functions/create-cases.js');
    const { buildGetCaseHandler } = await import('../../../functions/get-case.js');
    const { buildListCasesHandler } = await import('../../../functions/list-cases.js');
    const { CursorSealer } = await import('../../../lib/cases/list-cursor.js');
    const memory = await import('../../support/memory-stores.js');
    const { fileKeyProblem, issueFileKey } = await import('../../../lib/uploads/file-key.js');
    const { apiKey, record } = await partnerKey();
    const keys = new memory.MemoryApiKeyStore();
    keys.records.set(record.keyId, record);
    const writer = new memory.MemoryCaseWriter();
    const files = new memory.MemoryFileStore();
    const fileKey = issueFileKey(record.companyId, 'application/pdf');
    files.keys.add(fileKey);
    const create = buildCreateCasesHandler({
      keys,
      companies: new memory.MemoryCompanyStore(),
      writer,
      idempotency: new memory.MemoryIdempotencyStore(),
      references: new memory.MemoryReferenceAllocator(),
      files,
      log: memory.silentLog,
      fileKeyProblem,
      now: () => now,
      idempotencyTtlSeconds: 86_400,
      claimHorizonSeconds: 20,
    });
    const get = buildGetCaseHandler({ keys, caseReader: writer, now: () => now });
    const lister = {
      page: async () => ({ cases: [...writer.cases.values()], next: null }),
      findByInvoiceRef: writer.findByInvoiceRef.bind(writer),
    };
    const sealer = new CursorSealer(Buffer.alloc(32, 7));
    const list = buildListCasesHandler({ keys, caseLister: lister, cursors: async () => sealer, now: () => now });
    const headers = bearer(apiKey);
    return {
      gap,
      post: async (cases: unknown[]) =>
        parse(
          await create(
            apiEvent({
              method: 'POST',
              path: '/api/v1/cases',
              resource: '/api/v1/cases',
              headers: { ...headers, 'Content-Type': 'application/json' },
              body: JSON.stringify({ cases }),
            }),
            lambdaContext(),
          ),
        ),
      read: async (id: string) =>
        parse(
          await get(
            apiEvent({ method: 'GET', path: `/api/v1/cases/${id}`, resource: '/api/v1/cases/{id}', pathParameters: { id }, headers }),
            lambdaContext(),
          ),
        ),
      list: async () =>
        parse(await list(apiEvent({ method: 'GET', path: '/api/v1/cases', resource: '/api/v1/cases', headers }), lambdaContext())),
      fileKey,
    };
  });
}

const applicationMetricsOf = (docs: EmfDocument[]) => docs.filter((d) => !('ColdStart' in d.metrics)).map((d) => d.metrics);

describe('the reference-rate metric operators are alarmed on', () => {
  let restoreEnv: () => void;
  beforeEach(() => {
    restoreEnv = setEnv(LAMBDA_METRICS_ENV);
  });
  afterEach(() => restoreEnv());

  it('create-cases, get-case and list-cases publish ReferenceRateMissing once per request, counting the cases without a rate, and nothing for the others', async () => {
    const routes = await loadCaseRoutes();
    const { gap, fileKey } = routes;
    const invoiceDate = gap.dayAfter(-60);
    let created: { invoiceRef: string; id: string }[] = [];
    const posted = await emfWrittenBy(async () => {
      const res = await routes.post([
        validCase(fileKey, { invoiceRef: 'RATED', invoiceDate, dueDate: gap.dayAfter(-2) }),
        validCase(fileKey, { invoiceRef: 'GAP-A', invoiceDate, dueDate: gap.lastDayWith }),
        validCase(fileKey, { invoiceRef: 'GAP-B', invoiceDate, dueDate: gap.dayAfter(30) }),
        validCase(fileKey, { invoiceRef: 'GAP-NO-CLAIM', invoiceDate, dueDate: gap.dayAfter(30), claimStatutoryInterest: false }),
      ]);
      created = res.body.created as { invoiceRef: string; id: string }[];
    });
    expect(created).toHaveLength(4);
    expect(caseMetricsOf(posted)).toEqual([
      {
        namespace: SERVICE.namespace,
        // The service dimension alone, as the alarm reads it.
        dimensions: [['service']],
        metrics: {
          CasesSubmitted: 4,
          CasesCreated: 4,
          CasesRejected: 0,
          CasesTemporaryFailure: 0,
          CaseWriteOutcomeUnknown: 0,
          ReferenceRateMissing: 2,
        },
        properties: { service: SERVICE.service },
      },
    ]);

    const idOf = (ref: string) => created.find((c) => c.invoiceRef === ref)!.id;
    const readGap = await emfWrittenBy(() => routes.read(idOf('GAP-A')));
    expect(readGap.map((d) => ({ dimensions: d.dimensions, metrics: d.metrics }))).toEqual([
      { dimensions: [['service']], metrics: { ReferenceRateMissing: 1 } },
    ]);
    for (const ref of ['RATED', 'GAP-NO-CLAIM']) expect(applicationMetricsOf(await emfWrittenBy(() => routes.read(idOf(ref))))).toEqual([]);

    let listed = 0;
    const listedDocs = await emfWrittenBy(async () => {
      listed = ((await routes.list()).body.data as unknown[]).length;
    });
    expect(listed).toBe(4);
    expect(applicationMetricsOf(listedDocs)).toEqual([{ ReferenceRateMissing: 2 }]);
  });

  it('a batch whose cases all have their rate publishes no ReferenceRateMissing', async () => {
    const routes = await loadCaseRoutes();
    const docs = await emfWrittenBy(() =>
      routes.post([validCase(routes.fileKey, { invoiceDate: routes.gap.dayAfter(-60), dueDate: routes.gap.dayAfter(-2) })]),
    );
    expect(caseMetricsOf(docs).map((d) => Object.keys(d.metrics))).toEqual([
      ['CasesSubmitted', 'CasesCreated', 'CasesRejected', 'CasesTemporaryFailure', 'CaseWriteOutcomeUnknown'],
    ]);
  });

  it('a case due before the table’s first half-year shows its interest null but pages no one: no operator adds that rate', async () => {
    const routes = await loadCaseRoutes();
    let created: { id: string }[] = [];
    const posted = await emfWrittenBy(async () => {
      created = (await routes.post([validCase(routes.fileKey, { invoiceDate: '2013-09-01', dueDate: '2013-10-01' })])).body.created as {
        id: string;
      }[];
    });
    expect(created).toHaveLength(1);
    expect(caseMetricsOf(posted).map((d) => Object.keys(d.metrics))).not.toContainEqual(expect.arrayContaining(['ReferenceRateMissing']));
    let amounts: Record<string, unknown> = {};
    const read = await emfWrittenBy(async () => {
      amounts = (await routes.read(created[0]!.id)).body.amounts as Record<string, unknown>;
    });
    expect(amounts).toMatchObject({ interestFrom: '2013-10-02', interestRate: null, interest: null });
    expect(applicationMetricsOf(read)).toEqual([]);
  });
});

const CONFIG: AppConfig = {
  tableName: 't',
  bucketName: 'b',
  region: 'eu-west-2',
  dynamoEndpoint: undefined,
  s3Endpoint: undefined,
  cursorSecret: undefined,
  cursorSecretArn: undefined,
  webhookSecretKey: undefined,
  webhookSecretKeyArn: undefined,
  webhookAllowLocalUrls: false,
  claimHorizonSeconds: 20,
  idempotencyTtlSeconds: 86_400,
  uploadUrlTtlSeconds: 900,
  local: false,
};

/** The storage clients the production wiring builds, loaded under `env`. */
async function storageClients(env: Env) {
  return loadIsolated(env, async () => {
    const { tracer } = await import('../../../lib/runtime/tracer.js');
    const { documentClient } = await import('../../../lib/adapters/dynamodb/dynamo-client.js');
    const { s3Client } = await import('../../../lib/adapters/s3/s3-client.js');
    return { tracer, dynamo: documentClient(CONFIG), s3: s3Client(CONFIG) };
  });
}

const xrayMiddleware = (client: { middlewareStack: { identify(): string[] } }) =>
  client.middlewareStack.identify().filter((m) => m.startsWith('XRaySDKInstrumentation'));

/** As in Lambda with active tracing. */
const TRACING_ON: Env = {
  AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x',
  POWERTOOLS_TRACE_ENABLED: 'true',
  // The X-Ray SDK in its default (automatic) mode, as in Lambda.
  AWS_XRAY_MANUAL_MODE: undefined,
  // Patching Node's http module would outlive the test in this worker; it is not under test here.
  POWERTOOLS_TRACER_CAPTURE_HTTPS_REQUESTS: 'false',
};

describe('tracing', () => {
  it('in Lambda, the tracer wraps the DynamoDB and the S3 client, so every storage call is a subsegment', async () => {
    const { tracer, dynamo, s3 } = await storageClients(TRACING_ON);
    expect(tracer.isTracingEnabled()).toBe(true);
    expect(xrayMiddleware(dynamo)).toHaveLength(1);
    expect(xrayMiddleware(s3)).toHaveLength(1);
  });

  it("every route's segment is annotated with the cold start; only a request answered 5xx is recorded as a fault", async () => {
    const loaded = await loadIsolated(TRACING_ON, async () => {
      const { tracer } = await import('../../../lib/runtime/tracer.js');
      const { buildGetCaseHandler } = await import('../../../functions/get-case.js');
      const memory = await import('../../support/memory-stores.js');
      const { apiKey, record } = await partnerKey();
      const keys = new memory.MemoryApiKeyStore();
      keys.records.set(record.keyId, record);
      const caseReader = {
        get: async () => {
          throw new Error('storage is down');
        },
      };
      return { tracer, apiKey, handler: buildGetCaseHandler({ keys, caseReader }) };
    });
    const { tracer } = loaded;
    // No Lambda facade segment exists here: the segment bookkeeping is replaced, what the chain
    // asks of the tracer is recorded.
    jest.spyOn(tracer, 'getSegment').mockReturnValue(undefined);
    const coldStart = jest.spyOn(tracer, 'annotateColdStart').mockImplementation(() => undefined);
    jest.spyOn(tracer, 'addServiceNameAnnotation').mockImplementation(() => undefined);
    const fault = jest.spyOn(tracer, 'addErrorAsMetadata').mockImplementation(() => undefined);
    const response = jest.spyOn(tracer, 'addResponseAsMetadata');
    const read = async (headers: Record<string, string>) =>
      (
        await loaded.handler(
          apiEvent({
            method: 'GET',
            path: '/api/v1/cases/x',
            resource: '/api/v1/cases/{id}',
            pathParameters: { id: 'case_0000000000000000000000' },
            headers,
          }),
          lambdaContext(),
        )
      ).statusCode;

    expect(await read({})).toBe(401);
    expect(fault).not.toHaveBeenCalled();
    expect(await read(bearer(loaded.apiKey))).toBe(500);
    expect(fault).toHaveBeenCalledTimes(1);
    expect((fault.mock.calls[0]![0] as Error).message).toBe('storage is down');
    expect(coldStart).toHaveBeenCalledTimes(2);
    expect(response).not.toHaveBeenCalled();
  });

  it('in tests and locally the X-Ray SDK tracks no promise: its context tracking (an async hook on every promise) is off with tracing', async () => {
    expect(process.env.AWS_XRAY_MANUAL_MODE).toBe('true');
    await storageClients({});
    // cls-hooked, loaded afresh with the SDK, keeps its namespaces here; automatic mode creates the SDK's and its hook.
    expect((process as { namespaces?: Record<string, unknown> }).namespaces?.AWSXRay).toBeUndefined();
    await storageClients({ AWS_XRAY_MANUAL_MODE: undefined });
    expect((process as { namespaces?: Record<string, unknown> }).namespaces?.AWSXRay).toBeDefined();
  });

  it('in tests and locally the tracer is off and the clients are left as they are: nothing needs X-Ray', async () => {
    expect(process.env.POWERTOOLS_TRACE_ENABLED).toBe('false');
    const { tracer, dynamo, s3 } = await storageClients({});
    expect(tracer.isTracingEnabled()).toBe(false);
    expect(xrayMiddleware(dynamo)).toEqual([]);
    expect(xrayMiddleware(s3)).toEqual([]);
    // Outside Lambda it is off even when not told.
    const outside = await storageClients({ POWERTOOLS_TRACE_ENABLED: undefined, AWS_EXECUTION_ENV: undefined });
    expect(outside.tracer.isTracingEnabled()).toBe(false);
    expect(xrayMiddleware(outside.dynamo)).toEqual([]);
  });
});
