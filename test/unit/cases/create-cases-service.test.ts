import type { Caller } from '../../../lib/auth/authenticate-key.js';
import { CreateCasesService, type CreateCasesDeps, type CreateCasesRequest } from '../../../lib/cases/create-cases-service.js';
import { requestFingerprint } from '../../../lib/cases/request-fingerprint.js';
import { EVENT_ID_PATTERN } from '../../../lib/cases/case-lifecycle.js';
import { awaitsReferenceRate, toCaseView } from '../../../lib/cases/case-record.js';
import { requestDeadline, standaloneDeadline } from '../../../lib/deadline.js';
import type { NewCase, WriteOutcome } from '../../../lib/cases/ports.js';
import type { Deadline } from '../../../lib/deadline.js';
import { IdempotencyKeyReusedError } from '../../../lib/errors.js';
import { fileKeyProblem, issueFileKey } from '../../../lib/uploads/file-key.js';
import { validCase } from '../../support/case-inputs.js';
import { referenceRateGap } from '../../support/reference-rate-gap.js';
import {
  MemoryCaseWriter,
  MemoryCompanyStore,
  MemoryFileStore,
  MemoryIdempotencyStore,
  MemoryLog,
  MemoryReferenceAllocator,
} from '../../support/memory-stores.js';

/**
 * The fast tier: CreateCasesService's orchestration over the in-memory ports (no Java, no
 * network). The port contract suite (test/integration/port-contracts.test.ts) holds these fakes
 * to DynamoDB Local's behaviour, so what passes here means the same against the real stores.
 */
const caller: Caller = { companyId: 'cmp_AAAAAAAAAAAAAAAA', keyId: 'KeyAAAAAAAAAAAAA', scopes: ['cases:write'], mode: 'live' };
const NOW = new Date('2026-03-01T12:00:00Z');

function world(overrides: Partial<CreateCasesDeps> = {}) {
  const companies = new MemoryCompanyStore();
  const writer = new MemoryCaseWriter();
  const idempotency = new MemoryIdempotencyStore();
  const references = new MemoryReferenceAllocator();
  const files = new MemoryFileStore();
  const log = new MemoryLog();
  const calls: string[] = [];
  let ids = 0;
  const deps: CreateCasesDeps = {
    companies,
    writer,
    idempotency,
    references,
    files,
    log,
    fileKeyProblem,
    now: () => NOW,
    idempotencyTtlSeconds: 86_400,
    claimHorizonSeconds: 20,
    newCaseId: () => `case_${String(++ids).padStart(22, '0')}`,
    ...overrides,
  };
  const fileKey = issueFileKey(caller.companyId, 'application/pdf');
  files.keys.add(fileKey);
  const service = new CreateCasesService(deps);
  const request = (cases: unknown[], extra: Partial<CreateCasesRequest> = {}): CreateCasesRequest => ({
    caller,
    requestId: 'req-1',
    sourceIp: '198.51.100.7',
    cases,
    deadline: standaloneDeadline(10_000),
    ...extra,
  });
  return { service, deps, companies, writer, idempotency, references, files, log, calls, fileKey, request };
}

describe('creating a batch of cases (use case, in memory)', () => {
  it('creates every valid case once, with consecutive references from one reservation', async () => {
    const w = world();
    const reserve = jest.spyOn(w.references, 'reserve');
    const exists = jest.spyOn(w.files, 'exists');
    const result = await w.service.create(
      w.request([validCase(w.fileKey, { invoiceRef: 'A-1' }), validCase(w.fileKey, { invoiceRef: 'A-2' })]),
    );
    expect(result.created.map((c) => [c.index, c.invoiceRef, c.reference])).toEqual([
      [0, 'A-1', 'PC-222-223'],
      [1, 'A-2', 'PC-222-224'],
    ]);
    expect(result.rejected).toEqual([]);
    expect(reserve).toHaveBeenCalledTimes(1);
    expect(reserve).toHaveBeenCalledWith(2, expect.anything());
    // One existence check per distinct file, however many cases cite it.
    expect(exists).toHaveBeenCalledTimes(1);
    expect(w.writer.cases.size).toBe(2);
    expect(w.writer.audits.get(result.created[0]!.id)).toMatchObject({
      keyId: caller.keyId,
      requestId: 'req-1',
      sourceIp: '198.51.100.7',
      b2b: true,
    });
  });

  it('creates each case DRAFT, PENDING with a debtorCompanyNo and NOT_REQUESTED without, its history DRAFT at creation, announced by one case.created event carrying that record', async () => {
    const w = world();
    const earlier = await w.service.create(w.request([validCase(w.fileKey, { invoiceRef: 'E-DUP' })]));
    w.writer.events.length = 0;
    const result = await w.service.create(
      w.request([
        validCase(w.fileKey, { invoiceRef: 'E-1', debtorCompanyNo: '01000001' }),
        validCase(w.fileKey, { invoiceRef: 'E-2' }),
        validCase(w.fileKey, { invoiceRef: 'E-DUP' }),
        validCase(w.fileKey, { invoiceRef: 'E-3', principalAmount: 0 }),
      ]),
    );
    expect(result.rejected.map((r) => [r.invoiceRef, r.code])).toEqual([
      ['E-DUP', 'DUPLICATE'],
      ['E-3', 'AMOUNT_OUT_OF_RANGE'],
    ]);
    const [withNumber, without] = result.created.map((c) => toCaseView(w.writer.cases.get(c.id)!, { now: NOW }));
    const at = NOW.toISOString();
    expect([withNumber, without]).toEqual([
      expect.objectContaining({ status: 'DRAFT', debtorVerification: { status: 'PENDING' }, statusHistory: [{ status: 'DRAFT', at }] }),
      expect.objectContaining({
        status: 'DRAFT',
        debtorVerification: { status: 'NOT_REQUESTED' },
        statusHistory: [{ status: 'DRAFT', at }],
      }),
    ]);
    expect(w.writer.events).toEqual(
      [withNumber!, without!].map((object) => ({
        id: expect.stringMatching(EVENT_ID_PATTERN),
        type: 'case.created',
        createdAt: at,
        livemode: true,
        data: { object },
      })),
    );
    expect(new Set(w.writer.events.map((e) => e.id)).size).toBe(2);
    expect(earlier.created).toHaveLength(1);
  });

  it('lets the first valid occurrence of an invoiceRef win inside one request, naming it in the duplicate', async () => {
    const w = world();
    const result = await w.service.create(
      w.request([
        validCase(w.fileKey, { invoiceRef: 'inv-9', principalAmount: 0 }),
        validCase(w.fileKey, { invoiceRef: ' INV-9' }),
        validCase(w.fileKey, { invoiceRef: 'Inv-9 ' }),
      ]),
    );
    expect(result.rejected.map((r) => [r.index, r.code])).toEqual([
      [0, 'AMOUNT_OUT_OF_RANGE'],
      [2, 'DUPLICATE'],
    ]);
    expect(result.created.map((c) => c.index)).toEqual([1]);
    expect(result.rejected[1]).toMatchObject({ existingCaseId: result.created[0]!.id, existingReference: result.created[0]!.reference });
    expect(w.writer.cases.size).toBe(1);
  });

  it('answers DUPLICATE with the existing case when the company already chases the invoiceRef', async () => {
    const w = world();
    const first = await w.service.create(w.request([validCase(w.fileKey, { invoiceRef: 'DUP-1' })]));
    const second = await w.service.create(w.request([validCase(w.fileKey, { invoiceRef: 'dup-1' })], { requestId: 'req-2' }));
    expect(second.created).toEqual([]);
    expect(second.rejected[0]).toMatchObject({
      code: 'DUPLICATE',
      existingCaseId: first.created[0]!.id,
      existingReference: first.created[0]!.reference,
    });
    expect(second.rejected[0]!.message).toContain(first.created[0]!.reference);
  });

  it('reports FILE_NOT_UPLOADED for a well-formed key with no object, and TEMPORARY_FAILURE when the check itself fails', async () => {
    const w = world();
    const missing = issueFileKey(caller.companyId, 'application/pdf');
    const broken = issueFileKey(caller.companyId, 'image/png');
    const realExists = w.files.exists.bind(w.files);
    jest.spyOn(w.files, 'exists').mockImplementation(async (key) => {
      if (key === broken) throw new Error('AccessDenied');
      return realExists(key);
    });
    const result = await w.service.create(w.request([validCase(missing), validCase(broken), validCase(w.fileKey)]));
    expect(result.rejected.map((r) => [r.index, r.code])).toEqual([
      [0, 'FILE_NOT_UPLOADED'],
      [1, 'TEMPORARY_FAILURE'],
    ]);
    expect(result.created.map((c) => c.index)).toEqual([2]);
    expect(w.log.lines).toEqual([expect.objectContaining({ level: 'warn', message: 'invoice file check failed' })]);
  });

  it('confirms files with an upload record in one read for the batch, and asks the object store only about the others', async () => {
    const w = world();
    const recordedKey = issueFileKey(caller.companyId, 'application/pdf');
    w.files.keys.add(recordedKey);
    w.files.recordedKeys.add(recordedKey);
    const recorded = jest.spyOn(w.files, 'recorded');
    const exists = jest.spyOn(w.files, 'exists');
    const result = await w.service.create(
      w.request([
        validCase(recordedKey, { invoiceRef: 'R-1' }),
        validCase(w.fileKey, { invoiceRef: 'R-2' }),
        validCase(recordedKey, { invoiceRef: 'R-3' }),
      ]),
    );
    expect(result.created.map((c) => c.index)).toEqual([0, 1, 2]);
    expect(recorded.mock.calls.map(([keys]) => [...keys].sort())).toEqual([[recordedKey, w.fileKey].sort()]);
    expect(exists.mock.calls.map(([key]) => key)).toEqual([w.fileKey]);
  });

  it('asks the object store about every file when the upload records cannot be read', async () => {
    const w = world();
    const missing = issueFileKey(caller.companyId, 'application/pdf');
    jest.spyOn(w.files, 'recorded').mockRejectedValue(new Error('ProvisionedThroughputExceeded'));
    const exists = jest.spyOn(w.files, 'exists');
    const result = await w.service.create(
      w.request([validCase(w.fileKey, { invoiceRef: 'F-1' }), validCase(missing, { invoiceRef: 'F-2' })]),
    );
    expect(result.created.map((c) => c.index)).toEqual([0]);
    expect(result.rejected.map((r) => [r.index, r.code])).toEqual([[1, 'FILE_NOT_UPLOADED']]);
    expect(exists).toHaveBeenCalledTimes(2);
    expect(w.log.lines).toEqual([
      expect.objectContaining({ level: 'warn', message: 'upload records could not be read; asking the object store' }),
    ]);
  });

  it('reports a case whose write failed as TEMPORARY_FAILURE, and its in-request twin too', async () => {
    const w = world();
    const realWrite = w.writer.write.bind(w.writer);
    jest.spyOn(w.writer, 'write').mockImplementation(async (c: NewCase, deadline?: Deadline): Promise<WriteOutcome> => {
      if (c.stored.invoiceRef === 'FAIL-1') return { kind: 'failed', attempts: 5, error: 'ThrottlingException' };
      if (c.stored.invoiceRef === 'LOST-1') return { kind: 'failed', attempts: 5, error: 'TimeoutError', outcomeUnknown: true };
      return realWrite(c, deadline);
    });
    const result = await w.service.create(
      w.request([
        validCase(w.fileKey, { invoiceRef: 'FAIL-1' }),
        validCase(w.fileKey, { invoiceRef: 'fail-1' }),
        validCase(w.fileKey, { invoiceRef: 'LOST-1' }),
        validCase(w.fileKey),
      ]),
    );
    expect(result.rejected.map((r) => [r.index, r.code])).toEqual([
      [0, 'TEMPORARY_FAILURE'],
      [1, 'TEMPORARY_FAILURE'],
      [2, 'TEMPORARY_FAILURE'],
    ]);
    expect(result.rejected[0]!.message).toMatch(/nothing was written/);
    // An unknown outcome must not claim "nothing was written": it says a resubmission is safe.
    expect(result.rejected[2]!.message).toMatch(/could not confirm/);
    expect(result.created.map((c) => c.index)).toEqual([3]);
  });

  it('counts the cases created whose half-year has no reference rate yet, for the operators’ alarm, and no other case', async () => {
    const gap = referenceRateGap();
    const now = new Date(`${gap.dayAfter(120)}T12:00:00Z`);
    const w = world({ now: () => now });
    jest.spyOn(w.writer, 'write').mockImplementation(async (c: NewCase): Promise<WriteOutcome> => {
      if (c.stored.invoiceRef === 'GAP-FAILED') return { kind: 'failed', attempts: 5, error: 'ThrottlingException' };
      w.writer.cases.set(c.stored.caseId, c.stored);
      return { kind: 'created', attempts: 1 };
    });
    const invoiceDate = gap.dayAfter(-60);
    const result = await w.service.create(
      w.request([
        // Interest from the table's last day: its rate is known.
        validCase(w.fileKey, { invoiceRef: 'RATED', invoiceDate, dueDate: gap.dayAfter(-2) }),
        // Due on the table's last day: interest from the first day without a rate.
        validCase(w.fileKey, { invoiceRef: 'GAP-A', invoiceDate, dueDate: gap.lastDayWith }),
        validCase(w.fileKey, { invoiceRef: 'GAP-B', invoiceDate, dueDate: gap.dayAfter(60) }),
        // No statutory interest claimed: no rate needed.
        validCase(w.fileKey, { invoiceRef: 'GAP-NO-CLAIM', invoiceDate, dueDate: gap.dayAfter(60), claimStatutoryInterest: false }),
        // Not created: neither failed nor rejected cases count.
        validCase(w.fileKey, { invoiceRef: 'GAP-FAILED', invoiceDate, dueDate: gap.dayAfter(60) }),
        validCase(w.fileKey, { invoiceRef: 'GAP-REJECTED', invoiceDate, dueDate: gap.dayAfter(60), principalAmount: 0 }),
      ]),
    );
    expect(result.created.map((c) => c.invoiceRef)).toEqual(['RATED', 'GAP-A', 'GAP-B', 'GAP-NO-CLAIM']);
    expect(result.referenceRateMissing).toBe(2);
    const views = [...w.writer.cases.values()].map((stored) => toCaseView(stored, { now }));
    const awaiting = views.filter(awaitsReferenceRate).map((v) => [v.invoiceRef, v.amounts.interestFrom, v.amounts.interestRate]);
    expect(awaiting.sort()).toEqual([
      ['GAP-A', gap.firstDayWithout, null],
      ['GAP-B', gap.dayAfter(61), null],
    ]);
    expect(views.find((v) => v.invoiceRef === 'RATED')!.amounts.interestRate).not.toBeNull();
  });

  describe('with an Idempotency-Key', () => {
    it('claims the key before any write and stores the answer for a replay', async () => {
      const w = world();
      const order: string[] = [];
      const claim = w.idempotency.claim.bind(w.idempotency);
      jest.spyOn(w.idempotency, 'claim').mockImplementation(async (r) => {
        order.push('claim');
        return claim(r);
      });
      const write = w.writer.write.bind(w.writer);
      jest.spyOn(w.writer, 'write').mockImplementation(async (c, d) => {
        order.push('write');
        return write(c, d);
      });
      const cases = [validCase(w.fileKey)];
      const first = await w.service.create(w.request(cases, { idempotencyKey: 'key-1' }));
      expect(order).toEqual(['claim', 'write']);
      const replay = await w.service.create(w.request(cases, { idempotencyKey: 'key-1', requestId: 'req-2' })).catch((e: unknown) => e);
      expect(replay).toBeInstanceOf(IdempotencyKeyReusedError);
      expect((replay as IdempotencyKeyReusedError).extensions).toEqual({
        state: 'COMPLETED',
        sameRequest: true,
        created: first.created,
        rejected: first.rejected,
      });
      expect(w.writer.cases.size).toBe(1);
    });

    it('refuses a key still in progress with a retry hint, writing nothing', async () => {
      const w = world();
      const cases = [validCase(w.fileKey)];
      const claimedAt = new Date(NOW.getTime() - 5_000);
      await w.idempotency.claim({
        mode: 'live',
        companyId: caller.companyId,
        idempotencyKey: 'busy',
        requestId: 'other',
        now: claimedAt,
        ttlSeconds: 86_400,
        staleAfterSeconds: 20,
        requestHash: requestFingerprint(cases),
      });
      const error = await w.service.create(w.request(cases, { idempotencyKey: 'busy' })).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(IdempotencyKeyReusedError);
      expect((error as IdempotencyKeyReusedError).extensions).toEqual({ state: 'IN_PROGRESS', sameRequest: true });
      // Claimed 5 s ago with a 20 s horizon: the first request is over (or abandoned) 15 s from now.
      expect((error as IdempotencyKeyReusedError).retryAfterSeconds).toBe(15);
      expect(w.writer.cases.size).toBe(0);
    });

    it('tells a safe retry from a key reused for another body: sameRequest', async () => {
      const w = world();
      const first = validCase(w.fileKey, { invoiceRef: 'SAME-1' });
      await w.service.create(w.request([first], { idempotencyKey: 'k-same' }));
      // Same body with its keys in another order: the same request.
      const reordered = Object.fromEntries(Object.entries(first).reverse());
      const same = await w.service
        .create(w.request([reordered], { idempotencyKey: 'k-same', requestId: 'req-2' }))
        .catch((e: unknown) => e);
      expect((same as IdempotencyKeyReusedError).extensions).toMatchObject({ state: 'COMPLETED', sameRequest: true });
      const other = await w.service
        .create(w.request([{ ...first, principalAmount: 99 }], { idempotencyKey: 'k-same', requestId: 'req-3' }))
        .catch((e: unknown) => e);
      expect((other as IdempotencyKeyReusedError).extensions).toMatchObject({ state: 'COMPLETED', sameRequest: false });
    });

    it('lets a claim left behind by a request that died be taken over once its horizon has passed', async () => {
      const w = world();
      await w.idempotency.claim({
        mode: 'live',
        companyId: caller.companyId,
        idempotencyKey: 'dead',
        requestId: 'died',
        now: new Date(NOW.getTime() - 21_000),
        ttlSeconds: 86_400,
        staleAfterSeconds: 20,
        requestHash: 'x',
      });
      const result = await w.service.create(w.request([validCase(w.fileKey)], { idempotencyKey: 'dead' }));
      expect(result.created).toHaveLength(1);
    });

    it('answers unavailable and gives the key back when storage cannot answer before the deadline', async () => {
      const w = world();
      const expired = standaloneDeadline(0);
      const error = await w.service
        .create(w.request([validCase(w.fileKey)], { idempotencyKey: 'late', deadline: expired }))
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
      expect(w.writer.cases.size).toBe(0);
      expect(w.idempotency.claims.size).toBe(0);
    });

    it('gives the key back when the request fails as a whole before any case is written', async () => {
      const w = world();
      jest.spyOn(w.references, 'reserve').mockRejectedValue(Object.assign(new Error('throttled'), { name: 'ThrottlingException' }));
      await expect(w.service.create(w.request([validCase(w.fileKey)], { idempotencyKey: 'key-2' }))).rejects.toThrow('throttled');
      expect(w.idempotency.claims.size).toBe(0);
      // The key is free again: a retry goes through.
      jest.restoreAllMocks();
      const retry = await w.service.create(w.request([validCase(w.fileKey)], { idempotencyKey: 'key-2', requestId: 'req-2' }));
      expect(retry.created).toHaveLength(1);
    });

    it('gives the key back when the claim itself failed, in case the put landed and only its answer was lost', async () => {
      const w = world();
      const claim = w.idempotency.claim.bind(w.idempotency);
      jest.spyOn(w.idempotency, 'claim').mockImplementation(async (r) => {
        await claim(r); // applied...
        throw Object.assign(new Error('socket hang up'), { name: 'TimeoutError' }); // ...answer lost
      });
      await expect(w.service.create(w.request([validCase(w.fileKey)], { idempotencyKey: 'key-3' }))).rejects.toThrow('socket hang up');
      expect(w.idempotency.claims.size).toBe(0);
      expect(w.writer.cases.size).toBe(0);
    });

    it('answers unavailable and gives the key back when no write landed and storage is sure of it', async () => {
      const w = world();
      jest.spyOn(w.writer, 'write').mockResolvedValue({ kind: 'failed', attempts: 0, error: 'DeadlinePassed' });
      const cases = [validCase(w.fileKey), validCase(w.fileKey, { principalAmount: 0 })];
      const error = await w.service.create(w.request(cases, { idempotencyKey: 'none-landed' })).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', retryAfterSeconds: 2 });
      expect(w.idempotency.claims.size).toBe(0);
    });

    it('passes the request’s deadline to every storage call, and the clean-up deadline to completing the claim', async () => {
      const w = world();
      const deadline = requestDeadline({ now: Date.now(), remainingMs: 10_000, reserveMs: 2_000, retryBudget: 50 });
      const spies = [
        jest.spyOn(w.idempotency, 'claim'),
        jest.spyOn(w.companies, 'get'),
        jest.spyOn(w.references, 'reserve'),
        jest.spyOn(w.files, 'exists'),
        jest.spyOn(w.writer, 'write'),
      ];
      const complete = jest.spyOn(w.idempotency, 'complete');
      await w.service.create(w.request([validCase(w.fileKey)], { idempotencyKey: 'k-deadline', deadline }));
      for (const spy of spies) expect(spy.mock.calls[0]?.at(-1)).toBe(deadline);
      const cleanUp = complete.mock.calls[0]?.at(-1) as Deadline;
      expect(cleanUp).not.toBe(deadline);
      // Clean-up may run into the reserve kept back from the work, up to the answer's own deadline.
      expect(cleanUp.workBy).toBe(deadline.answerBy);
      expect(cleanUp.workBy).toBeGreaterThan(deadline.workBy);
      expect(cleanUp.retries).toBe(deadline.retries);
    });

    it('keeps the claim once a write has started, and still answers when completing the claim fails', async () => {
      const w = world();
      jest.spyOn(w.idempotency, 'complete').mockRejectedValue(new Error('ProvisionedThroughputExceeded'));
      const result = await w.service.create(w.request([validCase(w.fileKey)], { idempotencyKey: 'key-4' }));
      expect(result.created).toHaveLength(1);
      expect(w.idempotency.claims.get(`live|${caller.companyId}|key-4`)?.state).toBe('IN_PROGRESS');
      expect(w.log.lines).toEqual([expect.objectContaining({ level: 'error', message: 'could not complete idempotency claim' })]);
    });
  });

  it('does no storage work beyond the claim when no case passes the pure rules', async () => {
    const w = world();
    const reserve = jest.spyOn(w.references, 'reserve');
    const company = jest.spyOn(w.companies, 'get');
    const result = await w.service.create(w.request([validCase(w.fileKey, { principalAmount: 20_000 }), { nonsense: true }]));
    expect(result.created).toEqual([]);
    expect(result.rejected.map((r) => r.code)).toEqual(['AMOUNT_OUT_OF_RANGE', 'INVALID_FIELD']);
    expect(reserve).not.toHaveBeenCalled();
    expect(company).not.toHaveBeenCalled();
  });

  it('sets the recovery gate from the company’s auto-attestation setting', async () => {
    const w = world();
    await w.companies.create({
      companyId: caller.companyId,
      name: 'Auto Co',
      autoAttestation: true,
      createdAt: NOW.toISOString(),
      updatedAt: NOW.toISOString(),
    });
    const result = await w.service.create(w.request([validCase(w.fileKey)]));
    expect(w.writer.cases.get(result.created[0]!.id)?.recoveryGate).toBe('AUTO_ATTESTED');
  });
});

describe('creating cases in test mode (use case, in memory)', () => {
  const testCaller: Caller = { ...caller, keyId: 'KeyTTTTTTTTTTTTT', mode: 'test' };
  const testFileKey = issueFileKey(caller.companyId, 'application/pdf', undefined, 'test');

  it('marks created cases livemode false, and a live case livemode true', async () => {
    const w = world();
    w.files.keys.add(testFileKey);
    const test = await w.service.create(w.request([validCase(testFileKey, { invoiceRef: 'T-1' })], { caller: testCaller }));
    const live = await w.service.create(w.request([validCase(w.fileKey, { invoiceRef: 'T-1' })]));
    expect(test.created).toEqual([expect.objectContaining({ invoiceRef: 'T-1', livemode: false })]);
    // The same invoiceRef exists once per mode.
    expect(live.created).toEqual([expect.objectContaining({ invoiceRef: 'T-1', livemode: true })]);
    expect(w.writer.cases.get(test.created[0]!.id)?.mode).toBe('test');
    expect(w.writer.audits.get(test.created[0]!.id)?.mode).toBe('test');
  });

  it('rejects SIMULATE-TEMPORARY-FAILURE invoiceRefs TEMPORARY_FAILURE in test mode, writing nothing for them', async () => {
    const w = world();
    w.files.keys.add(testFileKey);
    const result = await w.service.create(
      w.request([validCase(testFileKey, { invoiceRef: 'SIMULATE-TEMPORARY-FAILURE-1' }), validCase(testFileKey, { invoiceRef: 'T-2' })], {
        caller: testCaller,
      }),
    );
    expect(result.rejected).toEqual([
      expect.objectContaining({ index: 0, code: 'TEMPORARY_FAILURE', invoiceRef: 'SIMULATE-TEMPORARY-FAILURE-1' }),
    ]);
    expect(result.created.map((c) => c.invoiceRef)).toEqual(['T-2']);
    expect(w.writer.cases.size).toBe(1);
  });

  it('creates SIMULATE-TEMPORARY-FAILURE invoiceRefs normally in live mode', async () => {
    const w = world();
    const result = await w.service.create(w.request([validCase(w.fileKey, { invoiceRef: 'SIMULATE-TEMPORARY-FAILURE-1' })]));
    expect(result.created).toEqual([expect.objectContaining({ invoiceRef: 'SIMULATE-TEMPORARY-FAILURE-1', livemode: true })]);
  });

  it("refuses an upload of the other mode as INVALID_FILE_KEY, naming the modes rather than calling it another company's", async () => {
    const w = world();
    w.files.keys.add(testFileKey);
    const crossMode = await w.service.create(w.request([validCase(testFileKey, { invoiceRef: 'X-1' })]));
    expect(crossMode.rejected).toEqual([
      expect.objectContaining({
        code: 'INVALID_FILE_KEY',
        message: expect.stringMatching(/^invoiceFileKey was uploaded with a test-mode key and cannot be cited by a live-mode case;/),
      }),
    ]);
    const liveFileFromTest = await w.service.create(w.request([validCase(w.fileKey, { invoiceRef: 'X-2' })], { caller: testCaller }));
    expect(liveFileFromTest.rejected).toEqual([
      expect.objectContaining({
        code: 'INVALID_FILE_KEY',
        message: expect.stringMatching(/^invoiceFileKey was uploaded with a live-mode key and cannot be cited by a test-mode case;/),
      }),
    ]);
    const otherCompanyKey = issueFileKey('cmp_BBBBBBBBBBBBBBBB', 'application/pdf');
    const foreign = await w.service.create(w.request([validCase(otherCompanyKey, { invoiceRef: 'X-1' })]));
    expect(foreign.rejected[0]!.message).toMatch(/^invoiceFileKey was not issued to your company;/);
  });

  it('keeps Idempotency-Keys apart by mode: the same key in test does not replay the live answer', async () => {
    const w = world();
    w.files.keys.add(testFileKey);
    const live = await w.service.create(w.request([validCase(w.fileKey, { invoiceRef: 'I-1' })], { idempotencyKey: 'same-key' }));
    const test = await w.service.create(
      w.request([validCase(testFileKey, { invoiceRef: 'I-1' })], { caller: testCaller, idempotencyKey: 'same-key' }),
    );
    expect(live.created).toHaveLength(1);
    expect(test.created).toEqual([expect.objectContaining({ livemode: false })]);
    expect(test.created[0]!.id).not.toBe(live.created[0]!.id);
  });
});
