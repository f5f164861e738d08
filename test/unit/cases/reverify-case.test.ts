import type { Caller } from '../../../lib/auth/authenticate-key.js';
import { CreateCasesService } from '../../../lib/cases/create-cases-service.js';
import type { VerificationAttempt } from '../../../lib/cases/verification/ports.js';
import { reverifyCase } from '../../../lib/cases/verification/reverify-case.js';
import type { CaseVerificationDeps } from '../../../lib/cases/verification/verify-case-debtor.js';
import { standaloneDeadline } from '../../../lib/deadline.js';
import { fileKeyProblem, issueFileKey } from '../../../lib/uploads/file-key.js';
import { validCase } from '../../support/case-inputs.js';
import {
  MemoryCaseWriter,
  MemoryCompanyStore,
  MemoryFileStore,
  MemoryIdempotencyStore,
  MemoryLog,
  MemoryReferenceAllocator,
} from '../../support/memory-stores.js';
import { MemoryProfileCache, MemoryRateLimiter, ScriptedRegistry } from '../../support/memory-verification.js';

/**
 * The operator's reverify (lib/cases/verification/reverify-case.ts) over the in-memory ports: a
 * case left DRAFT is settled or verified by the worker's own use cases, once, however often the
 * operator runs it.
 */
const caller: Caller = { companyId: 'cmp_AAAAAAAAAAAAAAAA', keyId: 'KeyAAAAAAAAAAAAA', scopes: ['cases:write'], mode: 'live' };
const NOW = new Date('2026-03-01T12:00:00Z');

async function world(options: { autoAttestation: boolean; registryUp: boolean }) {
  const writer = new MemoryCaseWriter();
  const companies = new MemoryCompanyStore();
  await companies.create({
    companyId: caller.companyId,
    name: 'Partner Co',
    autoAttestation: options.autoAttestation,
    createdAt: NOW.toISOString(),
    updatedAt: NOW.toISOString(),
  });
  const files = new MemoryFileStore();
  const fileKey = issueFileKey(caller.companyId, 'application/pdf');
  files.keys.add(fileKey);
  let ids = 0;
  const service = new CreateCasesService({
    companies,
    writer,
    idempotency: new MemoryIdempotencyStore(),
    references: new MemoryReferenceAllocator(),
    files,
    log: new MemoryLog(),
    fileKeyProblem,
    now: () => NOW,
    idempotencyTtlSeconds: 86_400,
    claimHorizonSeconds: 20,
    newCaseId: () => `case_${String(++ids).padStart(22, '0')}`,
  });
  const create = async (overrides: Record<string, unknown>) => {
    const result = await service.create({
      caller,
      requestId: `req-${ids}`,
      sourceIp: '198.51.100.7',
      cases: [validCase(fileKey, overrides)],
      deadline: standaloneDeadline(10_000),
    });
    return result.created[0]!.id;
  };
  const registry = new ScriptedRegistry((companyNumber) =>
    options.registryUp
      ? { kind: 'found', profile: { companyNumber, companyName: 'ACME WIDGETS LIMITED', companyStatus: 'active' } }
      : { kind: 'unavailable', detail: 'Companies House answered 503' },
  );
  const scheduled: { attempt: VerificationAttempt; at: Date }[] = [];
  const later = new Date(NOW.getTime() + 25 * 60 * 60 * 1000);
  const deps: CaseVerificationDeps = {
    // The operator runs it a day after the case was created: the worker's retries are long exhausted.
    changes: { store: writer, now: () => later },
    verifier: { registry, cache: new MemoryProfileCache(), limiter: new MemoryRateLimiter(), random: () => 0 },
    retries: { schedule: async (attempt, at) => void scheduled.push({ attempt, at }) },
  };
  return { writer, create, deps, registry, scheduled, later };
}

describe('an operator reverifying a case left DRAFT', () => {
  it('verifies a PENDING debtor once the registry answers, moves the case to READY with one event, and changes nothing when run again', async () => {
    const w = await world({ autoAttestation: true, registryUp: true });
    const caseId = await w.create({ debtorCompanyNo: '01234567' });
    const eventsBefore = w.writer.events.length;

    const first = await reverifyCase(w.deps, { mode: 'live', companyId: caller.companyId, caseId });
    expect(first).toEqual({
      caseId,
      mode: 'live',
      companyId: caller.companyId,
      result: 'verified',
      status: 'READY',
      recoveryGate: 'AUTO_ATTESTED',
      debtorVerification: 'VERIFIED',
    });
    expect(w.registry.requests).toEqual(['01234567']);
    expect(w.writer.events.length).toBe(eventsBefore + 1);

    const again = await reverifyCase(w.deps, { mode: 'live', companyId: caller.companyId, caseId });
    expect(again).toMatchObject({ result: 'unchanged', reason: 'not_draft', status: 'READY' });
    expect(w.registry.requests).toHaveLength(1);
    expect(w.writer.events.length).toBe(eventsBefore + 1);
  });

  it('starts a fresh 24-hour retry series on the worker’s queue when the registry still fails', async () => {
    const w = await world({ autoAttestation: true, registryUp: false });
    const caseId = await w.create({ debtorCompanyNo: '01234567' });
    const outcome = await reverifyCase(w.deps, { mode: 'live', companyId: caller.companyId, caseId });
    expect(outcome).toMatchObject({
      result: 'retry_scheduled',
      detail: 'registry-unavailable',
      status: 'DRAFT',
      debtorVerification: 'PENDING',
    });
    expect(w.scheduled).toEqual([
      { attempt: { caseId, mode: 'live', firstAttemptAt: w.later.toISOString(), failures: 1 }, at: expect.any(Date) as Date },
    ]);
  });

  it('settles a case whose gates are satisfied but which never moved on (its stream record was lost)', async () => {
    const w = await world({ autoAttestation: true, registryUp: true });
    const caseId = await w.create({});
    const outcome = await reverifyCase(w.deps, { mode: 'live', companyId: caller.companyId, caseId });
    expect(outcome).toMatchObject({ result: 'settled', status: 'READY', debtorVerification: 'NOT_REQUESTED' });
    expect(w.registry.requests).toEqual([]);
  });

  it('leaves a case awaiting the partner’s confirmation as it is, and says so', async () => {
    const w = await world({ autoAttestation: false, registryUp: true });
    const caseId = await w.create({});
    const eventsBefore = w.writer.events.length;
    const outcome = await reverifyCase(w.deps, { mode: 'live', companyId: caller.companyId, caseId });
    expect(outcome).toMatchObject({ result: 'unchanged', reason: 'awaiting_confirmation', status: 'DRAFT' });
    expect(w.writer.events.length).toBe(eventsBefore);
  });

  it('finds no case of another company, nor of the other mode', async () => {
    const w = await world({ autoAttestation: true, registryUp: true });
    const caseId = await w.create({ debtorCompanyNo: '01234567' });
    expect(await reverifyCase(w.deps, { mode: 'live', companyId: 'cmp_BBBBBBBBBBBBBBBB', caseId })).toEqual({
      caseId,
      mode: 'live',
      result: 'not_found',
    });
    expect(await reverifyCase(w.deps, { mode: 'test', companyId: caller.companyId, caseId })).toMatchObject({ result: 'not_found' });
    expect(w.registry.requests).toEqual([]);
  });
});
