import { caseCreationAdapters } from '../lib/adapters/production-adapters.js';
import type { ApiKeyStore } from '../lib/auth/ports.js';
import { CreateCasesService, outcomeCounts, type CreateCasesDeps } from '../lib/cases/create-cases-service.js';
import { apiHandler, jsonResponse, type CoreHandler } from '../lib/http/api-handler.js';
import { parseBatchEnvelope } from '../lib/http/batch-envelope.js';
import { headerValues } from '../lib/http/headers.js';
import { callerOf } from '../lib/http/types.js';
import { metrics, MetricUnit } from '../lib/runtime/metrics.js';

/** POST /api/v1/cases (scope cases:write). */

export function createCases(service: CreateCasesService): CoreHandler {
  return async (event, context) => {
    const envelope = parseBatchEnvelope(event);
    const userAgent = headerValues(event, 'user-agent')[0];
    const result = await service.create({
      caller: callerOf(context),
      requestId: context.requestId,
      sourceIp: event.requestContext?.identity?.sourceIp ?? 'unknown',
      ...(userAgent ? { userAgent: userAgent.slice(0, 256) } : {}),
      ...(envelope.idempotencyKey ? { idempotencyKey: envelope.idempotencyKey } : {}),
      cases: envelope.cases,
      deadline: context.deadline,
    });

    const counts = outcomeCounts(result);
    Object.assign(context.logFields, {
      cases: envelope.cases.length,
      idempotencyKeyUsed: envelope.idempotencyKey !== undefined,
      ...counts,
    });
    metrics.addMetric('CasesSubmitted', MetricUnit.Count, envelope.cases.length);
    metrics.addMetric('CasesCreated', MetricUnit.Count, result.created.length);
    metrics.addMetric('CasesRejected', MetricUnit.Count, result.rejected.length);
    // Storage failures only: test mode's rehearsals (SIMULATE-TEMPORARY-FAILURE) page no one.
    metrics.addMetric('CasesTemporaryFailure', MetricUnit.Count, (counts.rejected_TEMPORARY_FAILURE ?? 0) - result.simulatedFailures);
    metrics.addMetric('CaseWriteOutcomeUnknown', MetricUnit.Count, result.writeOutcomeUnknown);
    // Only when some case awaits its half-year's reference rate: the operators' alarm fires on the first.
    if (result.referenceRateMissing > 0) metrics.addMetric('ReferenceRateMissing', MetricUnit.Count, result.referenceRateMissing);
    // Published by the shared chain's logMetrics middleware, once per invocation.

    // Spec 2.3: 201 when at least one case was created, else 200.
    return jsonResponse(result.created.length > 0 ? 201 : 200, { created: result.created, rejected: result.rejected });
  };
}

export interface CreateCasesHandlerDeps extends CreateCasesDeps {
  keys: ApiKeyStore;
}

export function buildCreateCasesHandler(deps: CreateCasesHandlerDeps) {
  return apiHandler({ scope: 'cases:write', keys: deps.keys, jsonBody: true }, createCases(new CreateCasesService(deps)));
}

export const handler = buildCreateCasesHandler(caseCreationAdapters());
