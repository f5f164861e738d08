import { route } from './route-entry.js';

/** `/api/v1/cases`: recovery cases. */
export const CASE_ROUTES = {
  // Up to 100 cases in a few rounds of TransactWriteItems (33 cases each) after one read of their upload
  // records, plus retries within the request's deadline; well inside API Gateway's 29 s.
  createCases: route({
    name: 'create-cases',
    constructId: 'CreateCases',
    method: 'POST',
    resource: '/api/v1/cases',
    operationName: 'CreateCases',
    summary: 'Create recovery cases (batch)',
    scope: 'cases:write',
    timeoutSeconds: 15,
    memorySetting: 'createCasesMemoryMb',
    grants: { table: 'write-cases', invoiceBucket: 'check-uploads' },
    load: () => import('../../../functions/create-cases.js'),
  }),
  // One round of parallel index queries; a selective status/recoveryGate filter may take a few more.
  listCases: route({
    name: 'list-cases',
    constructId: 'ListCases',
    method: 'GET',
    resource: '/api/v1/cases',
    operationName: 'ListCases',
    summary: 'List or look up cases',
    scope: 'cases:read',
    grants: { table: 'list-cases', cursorSecret: true },
    load: () => import('../../../functions/list-cases.js'),
  }),
  getCase: route({
    name: 'get-case',
    constructId: 'GetCase',
    method: 'GET',
    resource: '/api/v1/cases/{id}',
    operationName: 'GetCase',
    summary: 'Read a case',
    scope: 'cases:read',
    grants: { table: 'read' },
    load: () => import('../../../functions/get-case.js'),
  }),
};

/** Changing a case's lifecycle: the partner's withdrawal, the test helpers, the internal confirmations and the recovery back office's updates. */
export const CASE_CHANGE_ROUTES = {
  // One read of the case (beside the key) and one transaction; a lost race reads and writes again.
  withdrawCase: route({
    name: 'withdraw-case',
    constructId: 'WithdrawCase',
    method: 'POST',
    resource: '/api/v1/cases/{id}/withdraw',
    operationName: 'WithdrawCase',
    summary: 'Withdraw a case',
    scope: 'cases:write',
    grants: { table: 'withdraw-case' },
    load: () => import('../../../functions/withdraw-case.js'),
  }),
  // The case read beside the key, then (with an Idempotency-Key, its claim beside it) one transaction.
  recordPayment: route({
    name: 'record-payment',
    constructId: 'RecordPayment',
    method: 'POST',
    resource: '/api/v1/cases/{id}/payments',
    operationName: 'RecordPayment',
    summary: 'Record a payment the debtor made directly',
    scope: 'cases:write',
    grants: { table: 'record-payments' },
    load: () => import('../../../functions/record-payment.js'),
  }),
  // The case and its payments (one Query: at most 100) read in parallel.
  listCasePayments: route({
    name: 'list-case-payments',
    constructId: 'ListCasePayments',
    method: 'GET',
    resource: '/api/v1/cases/{id}/payments',
    operationName: 'ListCasePayments',
    summary: "List a case's payments",
    scope: 'cases:read',
    grants: { table: 'read-payments' },
    load: () => import('../../../functions/list-case-payments.js'),
  }),
  testConfirmCase: route({
    name: 'test-confirm-case',
    constructId: 'TestConfirmCase',
    method: 'POST',
    resource: '/api/v1/test-helpers/cases/{id}/confirm',
    operationName: 'TestConfirmCase',
    summary: 'Confirm a test case (test mode only)',
    scope: 'cases:write',
    grants: { table: 'confirm-test-cases' },
    load: () => import('../../../functions/test-confirm-case.js'),
  }),
  // One read of the case and one transaction (the case, its event, a payment item); a lost race reads and decides again.
  testApplyRecoveryUpdate: route({
    name: 'test-apply-recovery-update',
    constructId: 'TestApplyRecoveryUpdate',
    method: 'POST',
    resource: '/api/v1/test-helpers/cases/{id}/recovery',
    operationName: 'TestApplyRecoveryUpdate',
    summary: 'Apply a recovery update to a test case (test mode only)',
    scope: 'cases:write',
    grants: { table: 'apply-test-recovery-updates' },
    load: () => import('../../../functions/test-apply-recovery-update.js'),
  }),
  // Up to 100 confirmations in parallel, each a read and a transaction (two round trips).
  confirmCases: route({
    name: 'confirm-cases',
    constructId: 'ConfirmCases',
    method: 'POST',
    resource: '/internal/v1/confirmations',
    operationName: 'ConfirmCases',
    summary: 'Confirm cases (internal)',
    authorization: 'aws-iam',
    timeoutSeconds: 10,
    grants: { table: 'confirm-cases' },
    load: () => import('../../../functions/confirm-cases.js'),
  }),
  // Up to 100 updates, those of different cases in parallel, each a read of its record, a read of the
  // case and one transaction (a lost race reads and writes again): the confirmations' budget.
  applyRecoveryUpdates: route({
    name: 'apply-recovery-updates',
    constructId: 'ApplyRecoveryUpdates',
    method: 'POST',
    resource: '/internal/v1/recovery-updates',
    operationName: 'ApplyRecoveryUpdates',
    summary: 'Apply recovery updates (internal)',
    authorization: 'aws-iam',
    timeoutSeconds: 10,
    grants: { table: 'apply-recovery-updates' },
    load: () => import('../../../functions/apply-recovery-updates.js'),
  }),
};
