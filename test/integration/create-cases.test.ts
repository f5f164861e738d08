import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../../lib/runtime/config.js';
import { keys } from '../../lib/adapters/dynamodb/table-keys.js';
import { REFERENCE_PATTERN } from '../../lib/cases/case-reference.js';
import { accounts, ddb, extraKey, newPartner, type Partner } from '../support/fixtures.js';
import { EVENT_ID_PATTERN } from '../../lib/cases/case-lifecycle.js';
import { checkStorageInvariants, outcome, postCases, readCase, storedEvents, uploadInvoice, validCase } from '../support/cases.js';

// Some tests read storage whole (the invariants scan the table, which every suite fills): give them room on a busy machine.
jest.setTimeout(20_000);

describe('creating cases', () => {
  let partner: Partner;
  let fileKey: string;
  beforeAll(async () => {
    partner = await newPartner();
    fileKey = await uploadInvoice(partner.apiKey);
  });

  it('creates a valid case as DRAFT awaiting dashboard confirmation, readable by its id', async () => {
    const input = validCase(fileKey, { invoiceRef: 'INV-READ-1', principalAmount: 1250.5 });
    const res = await postCases(partner.apiKey, { cases: [input] });
    expect(res.statusCode).toBe(201);
    const { created, rejected } = outcome(res);
    expect(rejected).toEqual([]);
    expect(created).toEqual([
      {
        index: 0,
        invoiceRef: 'INV-READ-1',
        id: expect.stringMatching(/^case_/),
        reference: expect.stringMatching(REFERENCE_PATTERN),
        livemode: true,
      },
    ]);

    const read = await readCase(partner.apiKey, created[0]!.id);
    expect(read.statusCode).toBe(200);
    expect(read.body).toMatchObject({
      id: created[0]!.id,
      reference: created[0]!.reference,
      status: 'DRAFT',
      recoveryGate: 'AWAITING_CONFIRMATION',
      debtorName: 'Acme Widgets Ltd',
      principalAmount: '1250.50',
      currency: 'GBP',
      invoiceRef: 'INV-READ-1',
    });
    expect(read.body.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });

  it('stores claimStatutoryInterest as sent (true when absent), and the case claims accordingly', async () => {
    const res = await postCases(partner.apiKey, {
      cases: [
        validCase(fileKey, { invoiceRef: 'INV-CLAIM-1', principalAmount: 1000 }),
        validCase(fileKey, { invoiceRef: 'INV-CLAIM-2', principalAmount: 1000, claimStatutoryInterest: false }),
      ],
    });
    const [claiming, notClaiming] = await Promise.all(outcome(res).created.map((c) => readCase(partner.apiKey, c.id)));
    expect(claiming!.body).toMatchObject({ claimStatutoryInterest: true, amounts: { principal: '1000.00', compensation: '70.00' } });
    expect(notClaiming!.body).toMatchObject({
      claimStatutoryInterest: false,
      amounts: { principal: '1000.00', compensation: '0.00', interestRate: null, interest: '0.00', claimed: '1000.00' },
    });
  });

  it('keeps the attestation exactly as made, with who, when, which key and from where', async () => {
    const res = await postCases(partner.apiKey, { cases: [validCase(fileKey, { invoiceRef: 'INV-AUDIT-1' })] });
    const id = outcome(res).created[0]!.id;
    const audit = await ddb().send(new GetCommand({ TableName: config().tableName, Key: keys.attestation('live', id) }));
    expect(audit.Item).toMatchObject({
      caseId: id,
      companyId: partner.companyId,
      b2b: true,
      under10k: true,
      within6years: true,
      undisputed: true,
      attestedBy: 'Jane Smith, Credit Controller',
      keyId: partner.keyId,
      sourceIp: '203.0.113.7',
      requestId: expect.any(String),
      attestedAt: expect.any(String),
    });
  });

  it('marks cases of a company with auto-attestation as AUTO_ATTESTED', async () => {
    const auto = await newPartner(['cases:read', 'cases:write'], { autoAttestation: true });
    const file = await uploadInvoice(auto.apiKey);
    const res = await postCases(auto.apiKey, { cases: [validCase(file)] });
    const read = await readCase(auto.apiKey, outcome(res).created[0]!.id);
    expect(read.body.recoveryGate).toBe('AUTO_ATTESTED');
  });

  it('accounts for every element of a mixed batch exactly once, in order', async () => {
    const existing = await postCases(partner.apiKey, { cases: [validCase(fileKey, { invoiceRef: 'INV-MIX-DUP' })] });
    const existingRef = outcome(existing).created[0]!;
    const res = await postCases(partner.apiKey, {
      cases: [
        validCase(fileKey, { invoiceRef: 'INV-MIX-OK' }),
        validCase(fileKey, { invoiceRef: 'INV-MIX-FUTURE', dueDate: '2099-01-01' }),
        validCase(fileKey, { invoiceRef: 'inv-mix-dup ' }),
      ],
    });
    expect(res.statusCode).toBe(201);
    const { created, rejected } = outcome(res);
    expect(created.map((c) => c.index)).toEqual([0]);
    expect(rejected.map((r) => [r.index, r.invoiceRef, r.code])).toEqual([
      [1, 'INV-MIX-FUTURE', 'DUE_DATE_NOT_PAST'],
      [2, 'inv-mix-dup ', 'DUPLICATE'],
    ]);
    expect(rejected[1]!.message).toContain(existingRef.reference);
    expect(rejected[1]).toMatchObject({ existingCaseId: existingRef.id, existingReference: existingRef.reference });
    expect(rejected[0]!.errors).toEqual([{ field: 'dueDate', message: expect.any(String) }]);
  });

  it('answers 200 when nothing was created, echoing a missing invoiceRef as null', async () => {
    const res = await postCases(partner.apiKey, { cases: [{ ...validCase(fileKey), invoiceRef: undefined }, 42] });
    expect(res.statusCode).toBe(200);
    const { created, rejected } = outcome(res);
    expect(created).toEqual([]);
    expect(rejected).toEqual([
      expect.objectContaining({
        index: 0,
        invoiceRef: null,
        code: 'INVALID_FIELD',
        errors: [{ field: 'invoiceRef', message: 'invoiceRef is required' }],
      }),
      expect.objectContaining({ index: 1, invoiceRef: null, code: 'INVALID_FIELD' }),
    ]);
  });

  it('lets the first valid occurrence of an invoiceRef win inside one request', async () => {
    const res = await postCases(partner.apiKey, {
      cases: [
        validCase(fileKey, { invoiceRef: 'INV-SAME', principalAmount: 0 }),
        validCase(fileKey, { invoiceRef: ' inv-same' }),
        validCase(fileKey, { invoiceRef: 'INV-SAME' }),
      ],
    });
    const { created, rejected } = outcome(res);
    expect(created.map((c) => c.index)).toEqual([1]);
    expect(rejected.map((r) => [r.index, r.code])).toEqual([
      [0, 'AMOUNT_OUT_OF_RANGE'],
      [2, 'DUPLICATE'],
    ]);
    expect(rejected[1]).toMatchObject({ existingCaseId: created[0]!.id, existingReference: created[0]!.reference });
    expect(rejected[1]!.message).toContain(created[0]!.reference);
  });

  it('guards invoiceRefs per company: another company may chase the same invoiceRef', async () => {
    await postCases(partner.apiKey, { cases: [validCase(fileKey, { invoiceRef: 'INV-SHARED' })] });
    const other = await newPartner();
    const otherFile = await uploadInvoice(other.apiKey);
    const res = await postCases(other.apiKey, { cases: [validCase(otherFile, { invoiceRef: 'INV-SHARED' })] });
    expect(res.statusCode).toBe(201);
  });

  it('refuses a file key issued to another company and one never uploaded', async () => {
    const other = await newPartner();
    const otherFile = await uploadInvoice(other.apiKey);
    const neverUploaded = otherFile.replace(/\/[^/]+\.pdf$/, '/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA.pdf');
    const res = await postCases(partner.apiKey, {
      cases: [validCase(otherFile), validCase(fileKey.replace(/\/[^/]+\.pdf$/, '/' + neverUploaded.split('/').pop()))],
    });
    const { rejected } = outcome(res);
    expect(rejected.map((r) => r.code)).toEqual(['INVALID_FILE_KEY', 'FILE_NOT_UPLOADED']);
  });

  it('gives consecutive references to the cases of one batch', async () => {
    const res = await postCases(partner.apiKey, { cases: [validCase(fileKey), validCase(fileKey), validCase(fileKey)] });
    const refs = outcome(res).created.map((c) => c.reference);
    expect(new Set(refs).size).toBe(3);
    expect([...refs].sort()).toEqual(refs);
  });

  it('leaves storage consistent: every case has its guard, audit record and one case.created event', async () => {
    const report = await checkStorageInvariants(new Set([partner.companyId]));
    expect(report.violations).toEqual([]);
    expect(report.checked).toBeGreaterThan(10);
  });
});

describe('the case.created event written with each case (the outbox)', () => {
  let partner: Partner;
  let fileKey: string;
  beforeAll(async () => {
    partner = await newPartner();
    fileKey = await uploadInvoice(partner.apiKey);
  });

  it('announces each created case with exactly one case.created event whose data.object is what GET returns', async () => {
    const res = await postCases(partner.apiKey, {
      cases: [
        validCase(fileKey, { invoiceRef: 'INV-EVT-1' }),
        // 01000408: the registry stand-in answers it too late, so the worker (run by the global setup) leaves it PENDING
        // and GET returns the case as it was created.
        validCase(fileKey, { invoiceRef: 'INV-EVT-2', debtorCompanyNo: '01000408' }),
      ],
    });
    expect(res.statusCode).toBe(201);
    const { created } = outcome(res);
    const events = await storedEvents(partner.companyId);
    expect(events.map((e) => e.event.data.object.id).sort()).toEqual(created.map((c) => c.id).sort());
    for (const c of created) {
      const read = await readCase(partner.apiKey, c.id);
      const [{ item, event }] = events.filter((e) => e.item.caseId === c.id) as [(typeof events)[number]];
      expect(event).toEqual({
        id: expect.stringMatching(EVENT_ID_PATTERN),
        type: 'case.created',
        createdAt: read.body.createdAt,
        livemode: true,
        data: { object: read.body },
      });
      expect(item).toMatchObject({
        eventId: event.id,
        eventType: 'case.created',
        caseId: c.id,
        mode: 'live',
        createdAt: read.body.createdAt,
      });
    }
  });

  it('writes no event for a DUPLICATE or a rejected case', async () => {
    const first = outcome(await postCases(partner.apiKey, { cases: [validCase(fileKey, { invoiceRef: 'INV-EVT-DUP' })] })).created;
    const before = await storedEvents(partner.companyId);
    const res = await postCases(partner.apiKey, {
      cases: [
        validCase(fileKey, { invoiceRef: 'INV-EVT-DUP' }),
        validCase(fileKey, { invoiceRef: 'INV-EVT-LATE', dueDate: '2099-01-01' }),
        validCase(fileKey, { invoiceRef: 'INV-EVT-NEW' }),
        validCase(fileKey, { invoiceRef: 'inv-evt-new ' }),
      ],
    });
    const { created, rejected } = outcome(res);
    expect(rejected.map((r) => r.code)).toEqual(['DUPLICATE', 'DUE_DATE_NOT_PAST', 'DUPLICATE']);
    const after = await storedEvents(partner.companyId);
    expect(after.length).toBe(before.length + 1);
    expect(after.filter((e) => e.item.caseId === first[0]!.id)).toHaveLength(1);
    expect(after.filter((e) => !before.some((b) => b.event.id === e.event.id)).map((e) => e.item.caseId)).toEqual([created[0]!.id]);
  });

  it('keeps a test-mode case’s event in the test world, with livemode false', async () => {
    const testKey = await extraKey(partner.companyId, ['cases:read', 'cases:write'], 'test');
    const testFile = await uploadInvoice(testKey);
    const [c] = outcome(await postCases(testKey, { cases: [validCase(testFile)] })).created;
    const [stored] = (await storedEvents(partner.companyId)).filter((e) => e.item.caseId === c!.id);
    expect(stored!.item).toMatchObject({
      mode: 'test',
      pk: keys.event('test', stored!.event.id).pk,
      gsi1pk: `TESTDATA#${partner.companyId}`,
    });
    expect(stored!.event).toMatchObject({ livemode: false, data: { object: (await readCase(testKey, c!.id)).body } });
  });
});

describe('the create request envelope', () => {
  let partner: Partner;
  let fileKey: string;
  beforeAll(async () => {
    partner = await newPartner();
    fileKey = await uploadInvoice(partner.apiKey);
  });

  it.each([
    ['a body that is not JSON', '{"cases": [', 400, 'INVALID_REQUEST'],
    ['a body that is an array', '[]', 400, 'INVALID_REQUEST'],
    ['a body without cases', '{}', 400, 'INVALID_REQUEST'],
    ['cases that is not an array', '{"cases": {}}', 400, 'INVALID_REQUEST'],
    ['an unknown top-level field', '{"cases": [], "dryRun": true}', 400, 'INVALID_REQUEST'],
    ['zero cases', '{"cases": []}', 400, 'BATCH_EMPTY'],
    ['an empty body', '', 400, 'INVALID_REQUEST'],
  ])('refuses %s', async (_name, body, status, code) => {
    const res = await postCases(partner.apiKey, body);
    expect(res.statusCode).toBe(status);
    expect(res.headers['content-type']).toBe('application/problem+json');
    expect(res.body.code).toBe(code);
  });

  it('refuses 101 cases with BATCH_TOO_LARGE', async () => {
    const res = await postCases(partner.apiKey, { cases: Array.from({ length: 101 }, () => validCase(fileKey)) });
    expect([res.statusCode, res.body.code]).toEqual([400, 'BATCH_TOO_LARGE']);
  });

  it('refuses a body over 1 MiB with 413 before parsing it', async () => {
    const res = await postCases(partner.apiKey, `{"cases": [], "pad": "${'x'.repeat(1024 * 1024)}"}`);
    expect([res.statusCode, res.body.code]).toEqual([413, 'PAYLOAD_TOO_LARGE']);
  });

  it('refuses a body that is not sent as JSON with 415', async () => {
    const res = await postCases(partner.apiKey, { cases: [validCase(fileKey)] }, { 'Content-Type': 'text/plain' });
    expect([res.statusCode, res.body.code]).toEqual([415, 'UNSUPPORTED_MEDIA_TYPE']);
  });

  it('checks the key before the envelope: 401, then 403, then 400', async () => {
    const readOnly = await extraKey(partner.companyId, ['cases:read']);
    expect((await postCases('pca_nope', '{')).statusCode).toBe(401);
    expect((await postCases(readOnly, '{')).statusCode).toBe(403);
  });

  it('does not consume an Idempotency-Key on an envelope error', async () => {
    const key = `idem-envelope-${Date.now()}`;
    expect((await postCases(partner.apiKey, { cases: [] }, { 'Idempotency-Key': key })).statusCode).toBe(400);
    expect((await postCases(partner.apiKey, { cases: [validCase(fileKey)] }, { 'Idempotency-Key': key })).statusCode).toBe(201);
  });

  it('refuses a malformed Idempotency-Key with 400', async () => {
    const res = await postCases(partner.apiKey, { cases: [validCase(fileKey)] }, { 'Idempotency-Key': 'has space' });
    expect([res.statusCode, res.body.code]).toEqual([400, 'INVALID_REQUEST']);
  });
});

describe('Idempotency-Key', () => {
  let partner: Partner;
  let fileKey: string;
  beforeAll(async () => {
    partner = await newPartner();
    fileKey = await uploadInvoice(partner.apiKey);
  });

  it('answers a repeat with 409 carrying the original result, and creates nothing new', async () => {
    const key = `idem-${Date.now()}`;
    const first = await postCases(
      partner.apiKey,
      { cases: [validCase(fileKey), validCase(fileKey, { principalAmount: 0 })] },
      { 'Idempotency-Key': key },
    );
    expect(first.statusCode).toBe(201);
    const again = await postCases(partner.apiKey, { cases: [validCase(fileKey)] }, { 'Idempotency-Key': `"${key}"` });
    expect(again.statusCode).toBe(409);
    expect(again.headers['content-type']).toBe('application/problem+json');
    expect(again.body).toMatchObject({
      code: 'IDEMPOTENCY_KEY_REUSED',
      state: 'COMPLETED',
      created: first.body.created,
      rejected: first.body.rejected,
    });
  });

  it('is scoped per company', async () => {
    const key = `idem-shared-${Date.now()}`;
    const other = await newPartner();
    const otherFile = await uploadInvoice(other.apiKey);
    expect((await postCases(partner.apiKey, { cases: [validCase(fileKey)] }, { 'Idempotency-Key': key })).statusCode).toBe(201);
    expect((await postCases(other.apiKey, { cases: [validCase(otherFile)] }, { 'Idempotency-Key': key })).statusCode).toBe(201);
  });

  it('works across keys of the same company (the claim belongs to the company)', async () => {
    const key = `idem-rotated-${Date.now()}`;
    const rotated = await accounts().rotateKey(partner.keyId);
    expect((await postCases(partner.apiKey, { cases: [validCase(fileKey)] }, { 'Idempotency-Key': key })).statusCode).toBe(201);
    expect((await postCases(rotated.apiKey, { cases: [validCase(fileKey)] }, { 'Idempotency-Key': key })).statusCode).toBe(409);
  });
});
