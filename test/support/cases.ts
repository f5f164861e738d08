import { QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { CreatedItem, RejectedItem } from '../../lib/cases/batch-result.js';
import type { CaseEvent } from '../../lib/cases/case-lifecycle.js';
import { eventFromItem } from '../../lib/adapters/dynamodb/event-items.js';
import { CASE_LIST_SHARDS, GSI2, ITEM_TYPES, keys } from '../../lib/adapters/dynamodb/table-keys.js';
import { MODES } from '../../lib/mode.js';
import { config } from '../../lib/runtime/config.js';
import { handler as uploadHandler } from '../../functions/create-upload.js';
import { handler as createHandler } from '../../functions/create-cases.js';
import { handler as getHandler } from '../../functions/get-case.js';
import { checkedInvoke } from './contract.js';
import { apiEvent, bearer, ddb, lambdaContext, parse, type ParsedResult } from './fixtures.js';

/** Helpers for the case-creation tests: real handlers, real local stores. */

export { validCase } from './case-inputs.js';

/** Requests an upload URL with the partner's key and PUTs a small PDF to it; returns the fileKey. */
export async function uploadInvoice(apiKey: string): Promise<string> {
  const bytes = Buffer.from('%PDF-1.4\n% test invoice\n');
  const res = parse(
    await checkedInvoke(
      uploadHandler,
      apiEvent({
        method: 'POST',
        path: '/api/v1/uploads',
        resource: '/api/v1/uploads',
        headers: { ...bearer(apiKey), 'Content-Type': 'application/json' },
        body: JSON.stringify({ fileName: 'invoice.pdf', contentType: 'application/pdf', contentLength: bytes.length }),
      }),
      lambdaContext(),
    ),
  );
  if (res.statusCode !== 201) throw new Error(`upload request failed: ${res.statusCode} ${JSON.stringify(res.body)}`);
  // A 5xx is retried, as S3's own clients do (S3 documents 500 and 503 as retryable): s3rver answered
  // 500 now and then on a busy CI machine, failing a suite in its set-up. The presigned URL stays valid.
  let put: Response | undefined;
  for (let attempt = 1; attempt <= 3; attempt++) {
    put = await fetch(res.body.uploadUrl as string, {
      method: 'PUT',
      headers: res.body.headers as Record<string, string>,
      body: bytes,
    });
    if (put.status < 500) break;
    await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
  }
  if (!put?.ok) throw new Error(`PUT failed: ${put?.status}`);
  return res.body.fileKey as string;
}

export function createEvent(apiKey: string, body: unknown, headers: Record<string, string> = {}) {
  return apiEvent({
    method: 'POST',
    path: '/api/v1/cases',
    resource: '/api/v1/cases',
    headers: { ...bearer(apiKey), 'Content-Type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

export async function postCases(
  apiKey: string,
  body: unknown,
  headers: Record<string, string> = {},
  handler = createHandler,
): Promise<ParsedResult> {
  return parse(await checkedInvoke(handler, createEvent(apiKey, body, headers), lambdaContext()));
}

export async function readCase(apiKey: string, id: string): Promise<ParsedResult> {
  return parse(
    await checkedInvoke(
      getHandler,
      apiEvent({
        method: 'GET',
        path: `/api/v1/cases/${id}`,
        resource: '/api/v1/cases/{id}',
        pathParameters: { id },
        headers: bearer(apiKey),
      }),
      lambdaContext(),
    ),
  );
}

export type { CreatedItem, RejectedItem };

export function outcome(res: ParsedResult): { created: CreatedItem[]; rejected: RejectedItem[] } {
  return { created: res.body.created as CreatedItem[], rejected: res.body.rejected as RejectedItem[] };
}

/** Every item in the table, for invariant checks. */
export async function scanTable(): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await ddb().send(new ScanCommand({ TableName: config().tableName, ExclusiveStartKey: start, ConsistentRead: true }));
    items.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
  } while (start);
  return items;
}

/**
 * A company's stored `case.created` events (both modes), each with its item's own attributes and
 * the event it holds: its event list's index partitions, queried (a scan of the whole table grows
 * with every suite's data). The worker's `case.updated` events, written as it settles cases, are left out.
 */
export async function storedEvents(companyId: string): Promise<{ item: Record<string, unknown>; event: CaseEvent }[]> {
  const items: Record<string, unknown>[] = [];
  for (const mode of MODES) {
    for (let shard = 0; shard < CASE_LIST_SHARDS; shard++) {
      let start: Record<string, unknown> | undefined;
      do {
        const out = await ddb().send(
          new QueryCommand({
            TableName: config().tableName,
            IndexName: GSI2,
            KeyConditionExpression: 'gsi2pk = :pk',
            ExpressionAttributeValues: { ':pk': keys.eventListPartition(mode, companyId, shard) },
            ExclusiveStartKey: start,
          }),
        );
        items.push(...(out.Items ?? []));
        start = out.LastEvaluatedKey;
      } while (start);
    }
  }
  return items
    .filter((i) => i.type === ITEM_TYPES.event && i.companyId === companyId && i.eventType === 'case.created')
    .map((item) => ({ item, event: eventFromItem(item).event }));
}

export interface InvariantReport {
  checked: number;
  violations: string[];
}

/**
 * The storage invariants of the product: one case per (company, mode, invoiceRef) that is not
 * WITHDRAWN; no guard without
 * its case; no case without its audit record; every case announced by exactly one `case.created`
 * event of its company and mode, and no event without its case (the outbox); every claim
 * COMPLETED, or IN_PROGRESS and expiring.
 */
export async function checkStorageInvariants(companyIds?: ReadonlySet<string>): Promise<InvariantReport> {
  const items = await scanTable();
  const inScope = (companyId: unknown) => !companyIds || companyIds.has(companyId as string);
  const cases = items.filter((i) => i.type === 'CASE' && inScope(i.companyId));
  const audits = new Set(items.filter((i) => i.type === 'ATTESTATION').map((i) => i.caseId));
  const guards = items.filter((i) => i.type === 'INVOICE_REF_GUARD' && inScope(i.companyId));
  const claims = items.filter((i) => i.type === 'IDEMPOTENCY_CLAIM' && inScope(i.companyId));
  const events = items.filter((i) => i.type === 'EVENT' && inScope(i.companyId));
  const caseIds = new Set(cases.map((c) => c.caseId));
  const createdEvents = new Map<unknown, Record<string, unknown>[]>();
  for (const e of events) if (e.eventType === 'case.created') createdEvents.set(e.caseId, [...(createdEvents.get(e.caseId) ?? []), e]);
  const violations: string[] = [];
  let checked = 0;
  const perRef = new Map<string, number>();
  for (const c of cases) {
    // One case per invoiceRef in each mode (test mode is a world of its own), withdrawn ones aside: they gave the invoiceRef up.
    const k = `${c.companyId as string}|${(c.mode as string | undefined) ?? 'live'}|${c.invoiceRefKey as string}`;
    if (c.status !== 'WITHDRAWN') perRef.set(k, (perRef.get(k) ?? 0) + 1);
    checked++;
    if (!audits.has(c.caseId)) violations.push(`case ${c.caseId as string} has no audit record`);
    const announced = createdEvents.get(c.caseId) ?? [];
    if (announced.length !== 1) violations.push(`case ${c.caseId as string} has ${announced.length} case.created events`);
    for (const e of announced) {
      if (e.companyId !== c.companyId || e.mode !== ((c.mode as string | undefined) ?? 'live'))
        violations.push(`event ${e.eventId as string} is not of its case's company and mode`);
    }
  }
  for (const e of events) {
    checked++;
    if (!caseIds.has(e.caseId)) violations.push(`event ${e.eventId as string} without its case ${e.caseId as string}`);
  }
  for (const [k, n] of perRef) {
    checked++;
    if (n > 1) violations.push(`${n} cases for ${k}`);
  }
  for (const g of guards) {
    checked++;
    if (!caseIds.has(g.caseId)) violations.push(`guard ${g.sk as string} without its case ${g.caseId as string}`);
  }
  const nowSeconds = Math.floor(Date.now() / 1000);
  for (const claim of claims) {
    checked++;
    const ok = claim.state === 'COMPLETED' || (claim.state === 'IN_PROGRESS' && typeof claim.ttl === 'number' && claim.ttl > nowSeconds);
    if (!ok) violations.push(`claim ${claim.sk as string} in state ${String(claim.state)}`);
  }
  return { checked, violations };
}
