import {
  ALLOWED_TRANSITIONS,
  buildCaseEvent,
  caseEventSchema,
  confirmCase,
  deriveStatus,
  recordVerification,
  settleStatus,
  withdrawCase,
  withdrawRequestSchema,
  type DebtorVerificationOutcome,
  type LifecycleChange,
  type LifecycleChanged,
  type LifecycleState,
} from '../../../lib/cases/case-lifecycle.js';
import { CodedError } from '../../../lib/errors.js';
import {
  CASE_STATUSES,
  caseViewSchema,
  newCaseLifecycle,
  toCaseView,
  type CaseStatus,
  type DebtorVerification,
  type RecoveryGate,
  type StoredCase,
} from '../../../lib/cases/case-record.js';
import { changeCase, type ChangeResult } from '../../../lib/cases/change-case.js';
import { MemoryCaseWriter } from '../../support/memory-stores.js';

const CREATED = new Date('2026-03-04T10:20:30.000Z');
const LATER = new Date('2026-03-04T10:25:00.000Z');

const state = (over: Partial<LifecycleState> = {}): LifecycleState => ({
  status: 'DRAFT',
  recoveryGate: 'AWAITING_CONFIRMATION',
  debtorVerification: { status: 'PENDING' },
  ...over,
});
const verified: DebtorVerificationOutcome = { status: 'VERIFIED', checkedAt: LATER.toISOString() };
const mismatch: DebtorVerificationOutcome = { status: 'NAME_MISMATCH', registeredName: 'OTHER LIMITED', checkedAt: LATER.toISOString() };
const notActive: DebtorVerificationOutcome = { status: 'NOT_ACTIVE', companyStatus: 'dissolved', checkedAt: LATER.toISOString() };
const notFound: DebtorVerificationOutcome = { status: 'NOT_FOUND', checkedAt: LATER.toISOString() };

/** A new case's lifecycle state, as creation stores it (newCaseLifecycle). */
function createdState(recoveryGate: RecoveryGate, hasDebtorCompanyNo: boolean): LifecycleState {
  const { status, debtorVerification } = newCaseLifecycle(hasDebtorCompanyNo, CREATED.toISOString());
  return { status, recoveryGate, debtorVerification };
}

function changed<R extends string>(result: LifecycleChange<R>): LifecycleChanged {
  if (!result.changed) throw new Error(`expected a change, got "${result.reason}"`);
  return result;
}

/** A case as creation stores it: its checked input, what creation adds, and newCaseLifecycle's fields. */
const createdCase = (recoveryGate: RecoveryGate, debtorCompanyNo?: string): StoredCase => ({
  caseId: 'case_7Gk2mP9qR4sT8vW1xY3zA5',
  companyId: 'cmp_1',
  reference: 'PC-222-22B',
  recoveryGate,
  currency: 'GBP',
  createdAt: CREATED.toISOString(),
  updatedAt: CREATED.toISOString(),
  createdByKeyId: 'key_1',
  requestId: 'req_1',
  mode: 'live',
  debtorName: 'Acme Widgets Ltd',
  debtorEmail: 'ap@acme.example',
  invoiceRef: 'INV-1',
  invoiceRefKey: 'INV-1',
  invoiceDate: '2026-01-10',
  dueDate: '2026-02-10',
  principalPence: 125050,
  invoiceFileKey: 'uploads/cmp_1/invoice.pdf',
  ...(debtorCompanyNo === undefined ? {} : { debtorCompanyNo }),
  ...newCaseLifecycle(debtorCompanyNo !== undefined, CREATED.toISOString()),
});

describe('a case is created', () => {
  it('DRAFT with one history entry, whatever its gates (spec rule 1)', () => {
    const view = toCaseView(createdCase('AUTO_ATTESTED'));
    expect(view).toMatchObject({ status: 'DRAFT', recoveryGate: 'AUTO_ATTESTED', debtorVerification: { status: 'NOT_REQUESTED' } });
    expect(view.statusHistory).toEqual([{ status: 'DRAFT', at: CREATED.toISOString() }]);
  });

  it('with its debtor verification PENDING when it cites a debtorCompanyNo', () => {
    expect(toCaseView(createdCase('AWAITING_CONFIRMATION', '01234567')).debtorVerification).toEqual({ status: 'PENDING' });
  });

  it('stored before the lifecycle existed, reads as a case created then', () => {
    const { debtorVerification: _dv, statusHistory: _history, ...legacy } = createdCase('AWAITING_CONFIRMATION', '01234567');
    expect(toCaseView(legacy)).toEqual(toCaseView(createdCase('AWAITING_CONFIRMATION', '01234567')));
  });
});

describe('the status follows the gates', () => {
  const gates = ['AUTO_ATTESTED', 'AWAITING_CONFIRMATION', 'CONFIRMED'] as const;
  const verifications: DebtorVerification[] = [{ status: 'NOT_REQUESTED' }, { status: 'PENDING' }, verified, mismatch, notActive, notFound];

  it.each(gates.flatMap((g) => verifications.map((v) => [g, v.status, v] as const)))(
    'recoveryGate %s with verification %s',
    (gate, _name, v) => {
      const expected: CaseStatus =
        v.status === 'NAME_MISMATCH' || v.status === 'NOT_ACTIVE' || v.status === 'NOT_FOUND'
          ? 'ON_HOLD'
          : gate !== 'AWAITING_CONFIRMATION' && (v.status === 'NOT_REQUESTED' || v.status === 'VERIFIED')
            ? 'READY'
            : 'DRAFT';
      expect(deriveStatus('DRAFT', gate, v)).toBe(expected);
    },
  );

  it('a withdrawn case stays withdrawn whatever its gates', () => {
    expect(deriveStatus('WITHDRAWN', 'AUTO_ATTESTED', { status: 'NOT_REQUESTED' })).toBe('WITHDRAWN');
    expect(deriveStatus('WITHDRAWN', 'CONFIRMED', notFound)).toBe('WITHDRAWN');
  });

  it('only DRAFT → READY | ON_HOLD, READY → IN_RECOVERY, and any open status → CLOSED | WITHDRAWN are transitions', () => {
    const pairs = CASE_STATUSES.flatMap((from) => ALLOWED_TRANSITIONS[from].map((to) => `${from}→${to}`));
    expect(pairs.sort()).toEqual([
      'DRAFT→CLOSED',
      'DRAFT→ON_HOLD',
      'DRAFT→READY',
      'DRAFT→WITHDRAWN',
      'IN_RECOVERY→CLOSED',
      'IN_RECOVERY→WITHDRAWN',
      'ON_HOLD→CLOSED',
      'ON_HOLD→WITHDRAWN',
      'READY→CLOSED',
      'READY→IN_RECOVERY',
      'READY→WITHDRAWN',
    ]);
  });

  it('never derives a way out of IN_RECOVERY, CLOSED or WITHDRAWN, whatever the gates say', () => {
    for (const status of ['IN_RECOVERY', 'CLOSED', 'WITHDRAWN'] as const)
      for (const gate of ['AUTO_ATTESTED', 'AWAITING_CONFIRMATION', 'CONFIRMED'] as const)
        for (const verification of [
          { status: 'VERIFIED', checkedAt: CREATED.toISOString() },
          { status: 'NOT_FOUND', checkedAt: CREATED.toISOString() },
        ] as const)
          expect(deriveStatus(status, gate, verification)).toBe(status);
  });

  it('leaves a closed case to itself: the verifier records nothing, a confirmation is not awaited, a withdrawal is refused CASE_NOT_OPEN', () => {
    const closed = state({ status: 'CLOSED', debtorVerification: { status: 'PENDING' } });
    expect(recordVerification(closed, { status: 'VERIFIED', checkedAt: LATER.toISOString() }, LATER)).toEqual({
      changed: false,
      reason: 'closed',
    });
    expect(confirmCase(closed, LATER)).toEqual({ changed: false, reason: 'not_awaiting' });
    expect(settleStatus({ ...closed, recoveryGate: 'AUTO_ATTESTED' }, LATER)).toEqual({ changed: false, reason: 'unchanged' });
    expect(() => withdrawCase(closed, LATER)).toThrow(
      expect.objectContaining({ code: 'CASE_NOT_OPEN', extensions: { caseStatus: 'CLOSED' } }),
    );
  });

  it('withdraws a case IN_RECOVERY, and a withdrawn one again is no change', () => {
    const withdrawn = changed(withdrawCase(state({ status: 'IN_RECOVERY', recoveryGate: 'AUTO_ATTESTED' }), LATER));
    expect(withdrawn.state.status).toBe('WITHDRAWN');
    expect(withdrawn.previousAttributes).toEqual({ status: 'IN_RECOVERY' });
    expect(withdrawCase(withdrawn.state, LATER)).toEqual({ changed: false, reason: 'already_withdrawn' });
  });
});

describe('an auto-attested case without a debtorCompanyNo', () => {
  it('is settled from DRAFT to READY with a history entry and previousAttributes { status: DRAFT }', () => {
    const c = changed(settleStatus(createdState('AUTO_ATTESTED', false), LATER));
    expect(c.state.status).toBe('READY');
    expect(c.historyEntry).toEqual({ status: 'READY', at: LATER.toISOString() });
    expect(c.previousAttributes).toEqual({ status: 'DRAFT' });
  });

  it('is settled once: a second settle is no change', () => {
    const c = changed(settleStatus(state({ recoveryGate: 'AUTO_ATTESTED', debtorVerification: { status: 'NOT_REQUESTED' } }), LATER));
    expect(settleStatus(c.state, LATER)).toEqual({ changed: false, reason: 'unchanged' });
  });

  it('a case still waiting for a gate is not settled', () => {
    expect(settleStatus(state(), LATER)).toEqual({ changed: false, reason: 'unchanged' });
  });
});

describe('a confirmation from the dashboard', () => {
  it('moves a case awaiting confirmation without a debtorCompanyNo to READY', () => {
    const c = changed(confirmCase(state({ debtorVerification: { status: 'NOT_REQUESTED' } }), LATER));
    expect(c.state).toEqual({ status: 'READY', recoveryGate: 'CONFIRMED', debtorVerification: { status: 'NOT_REQUESTED' } });
    expect(c.previousAttributes).toEqual({ status: 'DRAFT', recoveryGate: 'AWAITING_CONFIRMATION' });
    expect(c.historyEntry).toEqual({ status: 'READY', at: LATER.toISOString() });
  });

  it('leaves a case whose debtor is still being verified DRAFT: the gate changes, no history entry', () => {
    const c = changed(confirmCase(state(), LATER));
    expect(c.state.status).toBe('DRAFT');
    expect(c.state.recoveryGate).toBe('CONFIRMED');
    expect(c.historyEntry).toBeUndefined();
    expect(c.previousAttributes).toEqual({ recoveryGate: 'AWAITING_CONFIRMATION' });
  });

  it('is recorded on an ON_HOLD case, which stays ON_HOLD', () => {
    const c = changed(confirmCase(state({ status: 'ON_HOLD', debtorVerification: notFound }), LATER));
    expect(c.state).toMatchObject({ status: 'ON_HOLD', recoveryGate: 'CONFIRMED' });
    expect(c.historyEntry).toBeUndefined();
  });

  it('is already_confirmed the second time', () => {
    const c = changed(confirmCase(state({ debtorVerification: { status: 'NOT_REQUESTED' } }), LATER));
    expect(confirmCase(c.state, LATER)).toEqual({ changed: false, reason: 'already_confirmed' });
  });

  it('is not_awaiting for an auto-attested case', () => {
    expect(confirmCase(state({ recoveryGate: 'AUTO_ATTESTED' }), LATER)).toEqual({ changed: false, reason: 'not_awaiting' });
  });

  it('is not_awaiting for a withdrawn case', () => {
    expect(confirmCase(state({ status: 'WITHDRAWN' }), LATER)).toEqual({ changed: false, reason: 'not_awaiting' });
  });
});

describe('a withdrawal by the partner', () => {
  it.each(['DRAFT', 'READY', 'ON_HOLD'] as const)('withdraws a %s case, with the reason in its history entry', (status) => {
    const c = changed(withdrawCase(state({ status }), LATER, 'Paid in full'));
    expect(c.state.status).toBe('WITHDRAWN');
    expect(c.historyEntry).toEqual({ status: 'WITHDRAWN', at: LATER.toISOString(), reason: 'Paid in full' });
    expect(c.previousAttributes).toEqual({ status });
  });

  it('without a reason (or an empty one) has a history entry without reason', () => {
    expect(changed(withdrawCase(state(), LATER)).historyEntry).toEqual({ status: 'WITHDRAWN', at: LATER.toISOString() });
    expect(changed(withdrawCase(state(), LATER, '')).historyEntry).toEqual({ status: 'WITHDRAWN', at: LATER.toISOString() });
  });

  it('a second time is no change: already_withdrawn', () => {
    expect(withdrawCase(state({ status: 'WITHDRAWN' }), LATER, 'again')).toEqual({ changed: false, reason: 'already_withdrawn' });
  });

  it('accepts a reason of 500 characters (emoji count as one) and refuses 501 with INVALID_REQUEST on the field reason', () => {
    expect(changed(withdrawCase(state(), LATER, '😀'.repeat(500))).state.status).toBe('WITHDRAWN');
    let error: unknown;
    try {
      withdrawCase(state(), LATER, 'x'.repeat(501));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(CodedError);
    expect(error).toMatchObject({ code: 'INVALID_REQUEST', extensions: { errors: [{ field: 'reason' }] } });
  });

  it('body: an absent reason and an empty object are accepted; unknown fields and non-strings are refused', () => {
    expect(withdrawRequestSchema.safeParse({}).success).toBe(true);
    expect(withdrawRequestSchema.safeParse({ reason: 'Paid' }).success).toBe(true);
    expect(withdrawRequestSchema.safeParse({ reason: 5 }).success).toBe(false);
    expect(withdrawRequestSchema.safeParse({ reason: 'x', note: 'y' }).success).toBe(false);
    expect(withdrawRequestSchema.safeParse({ reason: '\ud800' }).success).toBe(false);
  });
});

describe('a debtor verification outcome', () => {
  it('VERIFIED makes an auto-attested case READY', () => {
    const c = changed(recordVerification(state({ recoveryGate: 'AUTO_ATTESTED' }), verified, LATER));
    expect(c.state).toEqual({ status: 'READY', recoveryGate: 'AUTO_ATTESTED', debtorVerification: verified });
    expect(c.previousAttributes).toEqual({ status: 'DRAFT', debtorVerification: { status: 'PENDING' } });
  });

  it('VERIFIED leaves a case awaiting confirmation DRAFT', () => {
    const c = changed(recordVerification(state(), verified, LATER));
    expect(c.state.status).toBe('DRAFT');
    expect(c.historyEntry).toBeUndefined();
    expect(c.previousAttributes).toEqual({ debtorVerification: { status: 'PENDING' } });
  });

  it.each([mismatch, notActive, notFound])('$status puts the case ON_HOLD with the outcome as the history reason', (outcome) => {
    const c = changed(recordVerification(state({ recoveryGate: 'CONFIRMED' }), outcome, LATER));
    expect(c.state.status).toBe('ON_HOLD');
    expect(c.state.debtorVerification).toEqual(outcome);
    expect(c.historyEntry).toEqual({ status: 'ON_HOLD', at: LATER.toISOString(), reason: outcome.status });
  });

  it('delivered twice (or by two workers) changes the case once: the second is not_pending', () => {
    const first = changed(recordVerification(state(), notFound, LATER));
    expect(recordVerification(first.state, verified, LATER)).toEqual({ changed: false, reason: 'not_pending' });
  });

  it('for a case without a debtorCompanyNo is not_pending', () => {
    expect(recordVerification(state({ debtorVerification: { status: 'NOT_REQUESTED' } }), verified, LATER)).toEqual({
      changed: false,
      reason: 'not_pending',
    });
  });

  it('for a case withdrawn meanwhile is no change: withdrawn', () => {
    expect(recordVerification(state({ status: 'WITHDRAWN' }), verified, LATER)).toEqual({ changed: false, reason: 'withdrawn' });
  });
});

describe('the case record and its events', () => {
  const created = createdCase('AWAITING_CONFIRMATION', '01234567');
  const view = toCaseView(created);

  /** The case changed as a route or worker changes it: through changeCase, on a store holding the created case. */
  async function change(
    rule: (s: LifecycleState, at: Date) => LifecycleChange<string>,
  ): Promise<Extract<ChangeResult<string>, { kind: 'changed' }>> {
    const store = new MemoryCaseWriter();
    store.cases.set(created.caseId, created);
    const result = await changeCase({ store, now: () => LATER }, { mode: created.mode, caseId: created.caseId, rule });
    if (result.kind !== 'changed') throw new Error(`expected a change, got ${result.kind}`);
    return result;
  }

  it('case.created carries the record with its lifecycle fields and no previousAttributes', () => {
    const event = buildCaseEvent(view, CREATED.toISOString());
    expect(caseEventSchema.parse(event)).toEqual(event);
    expect(event).toMatchObject({ type: 'case.created', livemode: true, createdAt: CREATED.toISOString(), data: { object: view } });
    expect(event.id).toMatch(/^evt_[0-9A-Za-z]{22}$/);
    expect(event.data).not.toHaveProperty('previousAttributes');
  });

  it('case.updated carries the record after the change, its history appended, and the earlier values', async () => {
    const { stored, event } = await change((s, at) => recordVerification(s, notFound, at));
    // An event's amounts are the case's as of the event (its own clock), not as of reading it.
    const after = toCaseView(stored, { now: LATER });
    expect(caseViewSchema.parse(after)).toEqual(after);
    expect(after).toMatchObject({ status: 'ON_HOLD', updatedAt: LATER.toISOString(), debtorVerification: notFound });
    expect(after.statusHistory).toEqual([
      { status: 'DRAFT', at: CREATED.toISOString() },
      { status: 'ON_HOLD', at: LATER.toISOString(), reason: 'NOT_FOUND' },
    ]);
    expect(caseEventSchema.parse(event)).toEqual(event);
    expect(event).toMatchObject({
      type: 'case.updated',
      data: { object: after, previousAttributes: { status: 'DRAFT', debtorVerification: { status: 'PENDING' } } },
    });
  });

  it('a withdrawal reason of 500 emoji (accepted by withdraw) is a valid history entry on the record and its event', async () => {
    const { stored, event } = await change((s, at) => withdrawCase(s, at, '😀'.repeat(500)));
    expect(caseViewSchema.safeParse(toCaseView(stored)).success).toBe(true);
    expect(caseEventSchema.safeParse(event).success).toBe(true);
  });

  it('a test-mode case has livemode false on its events', () => {
    expect(buildCaseEvent({ ...view, livemode: false }, CREATED.toISOString()).livemode).toBe(false);
  });

  it('verification shapes outside the rules are refused by the schema (e.g. NAME_MISMATCH without registeredName)', () => {
    expect(
      caseViewSchema.safeParse({ ...view, debtorVerification: { status: 'NAME_MISMATCH', checkedAt: LATER.toISOString() } }).success,
    ).toBe(false);
    expect(caseViewSchema.safeParse({ ...view, debtorVerification: { status: 'PENDING', checkedAt: LATER.toISOString() } }).success).toBe(
      false,
    );
  });
});

describe('any sequence of changes', () => {
  it('only ever makes allowed transitions, and the history records each status change once', () => {
    const gates = ['AUTO_ATTESTED', 'AWAITING_CONFIRMATION'] as const;
    const outcomes = [verified, mismatch, notActive, notFound];
    type Step = (s: LifecycleState) => LifecycleChange<string>;
    const steps: Step[] = [
      (s) => confirmCase(s, LATER),
      (s) => withdrawCase(s, LATER),
      (s) => settleStatus(s, LATER),
      ...outcomes.map(
        (o): Step =>
          (s) =>
            recordVerification(s, o, LATER),
      ),
    ];
    // Every order of up to 3 steps from every starting point: small enough to enumerate whole.
    for (const gate of gates) {
      for (const companyNo of [true, false]) {
        for (const a of steps)
          for (const b of steps)
            for (const c of steps) {
              let s = createdState(gate, companyNo);
              const history: CaseStatus[] = ['DRAFT'];
              for (const step of [a, b, c]) {
                const result = step(s);
                if (!result.changed) continue;
                expect(result.state.status === s.status || ALLOWED_TRANSITIONS[s.status].includes(result.state.status)).toBe(true);
                expect(result.historyEntry?.status).toBe(result.state.status === s.status ? undefined : result.state.status);
                expect(Object.keys(result.previousAttributes).length).toBeGreaterThan(0);
                if (result.historyEntry) history.push(result.historyEntry.status);
                s = result.state;
              }
              expect(history.at(-1)).toBe(s.status);
            }
      }
    }
  });
});
