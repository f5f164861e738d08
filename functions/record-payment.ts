import { paymentAdapters } from '../lib/adapters/production-adapters.js';
import type { ApiKeyStore } from '../lib/auth/ports.js';
import type { StoredCase } from '../lib/cases/case-record.js';
import { caseIdToRead, CASE_NOT_FOUND_DETAIL } from '../lib/cases/read-case.js';
import { recordPayment, type RecordPaymentDeps } from '../lib/cases/record-payment.js';
import { NotFoundError } from '../lib/errors.js';
import { apiHandler, jsonResponse } from '../lib/http/api-handler.js';
import { parseIdempotencyKey } from '../lib/http/batch-envelope.js';
import { callerOf, prefetchedValue } from '../lib/http/types.js';

/**
 * POST /api/v1/cases/{id}/payments (scope cases:write): the partner reports a payment the debtor
 * made directly. 201 `{ payment, case }`; the payment, the case's change, its event (and the
 * Idempotency-Key's answer, when one is sent) are one transaction (lib/cases/record-payment.ts).
 */
export interface RecordPaymentHandlerDeps {
  keys: ApiKeyStore;
  payments: RecordPaymentDeps;
  now?: () => Date;
}

export function buildRecordPaymentHandler(deps: RecordPaymentHandlerDeps) {
  const now = deps.now ?? (() => new Date());
  return apiHandler(
    {
      scope: 'cases:write',
      keys: deps.keys,
      jsonBody: true,
      // The case is read in parallel with the API key, in the mode of the key's prefix, as GET does;
      // it is looked at only after authentication, the scope check and the body's checks.
      prefetch: async (event, deadline, mode) => {
        const id = caseIdToRead(event.pathParameters?.id);
        return id === undefined ? undefined : deps.payments.store.get(mode, id, deadline);
      },
    },
    async (event, context) => {
      // The key's format is part of the envelope: a bad one is 400 before anything is claimed.
      const idempotencyKey = parseIdempotencyKey(event);
      const caseId = caseIdToRead(event.pathParameters?.id);
      if (caseId === undefined) throw new NotFoundError(CASE_NOT_FOUND_DETAIL);
      const caller = callerOf(context);
      const answer = await recordPayment(
        deps.payments,
        {
          companyId: caller.companyId,
          mode: caller.mode,
          caseId,
          payment: event.body as unknown,
          requestId: context.requestId,
          now: now(),
          ...(idempotencyKey !== undefined ? { idempotencyKey } : {}),
          firstRead: prefetchedValue<StoredCase | undefined>(context),
        },
        context.deadline,
      );
      Object.assign(context.logFields, { caseId, paymentId: answer.payment.id, idempotencyKeyUsed: idempotencyKey !== undefined });
      return jsonResponse(201, answer);
    },
  );
}

export const handler = buildRecordPaymentHandler(paymentAdapters());
