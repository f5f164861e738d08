import { config } from '../lib/config.js';
import { parseBatchEnvelope } from '../lib/cases/batch-envelope.js';
import { CreateCasesService, outcomeCounts, type CreateCasesDeps } from '../lib/cases/create-cases-service.js';
import { DynamoCaseWriter } from '../lib/data/case-writer.js';
import { documentClient } from '../lib/data/dynamo-client.js';
import { DynamoIdempotencyStore } from '../lib/data/idempotency-store.js';
import { DynamoReferenceAllocator } from '../lib/data/reference-counter.js';
import { defaultTableStores } from '../lib/data/stores.js';
import type { ApiKeyStore } from '../lib/data/api-key-store.js';
import { headerValues } from '../lib/middleware/headers.js';
import { apiHandler, jsonResponse, type CoreHandler } from '../lib/middleware/api-handler.js';
import { authOf } from '../lib/middleware/types.js';
import { metrics, MetricUnit } from '../lib/metrics.js';
import { invoiceFileStore } from '../lib/uploads/file-store.js';
import { fileKeyProblem } from '../lib/uploads/file-key.js';

/** POST /api/v1/cases (scope cases:write). */

/** Time kept back from the Lambda's remaining time so a response always leaves before the timeout. */
const DEADLINE_MARGIN_MS = 1_500;

export function createCases(service: CreateCasesService): CoreHandler {
  return async (event, context) => {
    const envelope = parseBatchEnvelope(event);
    const remaining = typeof context.getRemainingTimeInMillis === 'function' ? context.getRemainingTimeInMillis() : 30_000;
    const userAgent = headerValues(event, 'user-agent')[0];
    const result = await service.create({
      auth: authOf(context),
      requestId: context.requestId,
      sourceIp: event.requestContext?.identity?.sourceIp ?? 'unknown',
      ...(userAgent ? { userAgent: userAgent.slice(0, 256) } : {}),
      ...(envelope.idempotencyKey ? { idempotencyKey: envelope.idempotencyKey } : {}),
      cases: envelope.cases,
      deadlineMs: Date.now() + remaining - DEADLINE_MARGIN_MS,
    });

    const counts = outcomeCounts(result);
    Object.assign(context.logFields, { cases: envelope.cases.length, idempotencyKeyUsed: envelope.idempotencyKey !== undefined, ...counts });
    metrics.addMetric('CasesSubmitted', MetricUnit.Count, envelope.cases.length);
    metrics.addMetric('CasesCreated', MetricUnit.Count, result.created.length);
    metrics.addMetric('CasesRejected', MetricUnit.Count, result.rejected.length);
    metrics.addMetric('CasesTemporaryFailure', MetricUnit.Count, counts.rejected_TEMPORARY_FAILURE ?? 0);
    metrics.publishStoredMetrics();

    return jsonResponse(result.statusCode, { created: result.created, rejected: result.rejected });
  };
}

export interface CreateCasesHandlerDeps extends CreateCasesDeps {
  keys: ApiKeyStore;
}

export function buildCreateCasesHandler(deps: CreateCasesHandlerDeps) {
  return apiHandler({ scope: 'cases:write', keys: deps.keys, jsonBody: true }, createCases(new CreateCasesService(deps)));
}

/** The production wiring: the table-backed stores, the invoice bucket and the real clock. */
export function defaultCreateCasesDeps(): CreateCasesHandlerDeps {
  const cfg = config();
  const client = documentClient(cfg);
  const stores = defaultTableStores(cfg);
  return {
    keys: stores.keys,
    companies: stores.companies,
    writer: new DynamoCaseWriter(client, cfg.tableName),
    idempotency: new DynamoIdempotencyStore(client, cfg.tableName),
    references: new DynamoReferenceAllocator(client, cfg.tableName),
    files: invoiceFileStore(cfg),
    fileKeyProblem,
    now: () => new Date(),
    idempotencyTtlSeconds: cfg.idempotencyTtlSeconds,
  };
}

export const handler = buildCreateCasesHandler(defaultCreateCasesDeps());
