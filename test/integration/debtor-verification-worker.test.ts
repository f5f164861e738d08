import { CreateQueueCommand, GetQueueAttributesCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { AttributeValue, DynamoDBStreamEvent, SQSEvent } from 'aws-lambda';
import { buildVerifyDebtorsHandler } from '../../functions/verify-debtors.js';
import { CompaniesHouseRegistry } from '../../lib/adapters/companies-house/companies-house-registry.js';
import { DynamoCaseChangeStore } from '../../lib/adapters/dynamodb/case-change-store.js';
import { documentClient } from '../../lib/adapters/dynamodb/dynamo-client.js';
import { eventFromItem } from '../../lib/adapters/dynamodb/event-items.js';
import { GSI2, keys } from '../../lib/adapters/dynamodb/table-keys.js';
import { SqsVerificationRetries, retryMessageSchema, sqsClient } from '../../lib/adapters/sqs/verification-retry-queue.js';
import type { CaseEvent } from '../../lib/cases/case-lifecycle.js';
import type { Mode } from '../../lib/mode.js';
import { config } from '../../lib/runtime/config.js';
import { randomBase62 } from '../../lib/random-id.js';
import {
  REQUEST_LOG_PATH,
  STAND_IN_API_KEY,
  startCompaniesHouseStandIn,
  type CompaniesHouseStandIn,
} from '../../infra/local/companies-house-stand-in.js';
import { VERIFIER_FUNCTION_TIMEOUT_SECONDS, VERIFIER_RETRY_QUEUE } from '../../infra/contract/stream-consumers.js';
import { lambdaContext } from '../../infra/local/lambda-events.js';
import { outcome, postCases, uploadInvoice, validCase } from '../support/cases.js';
import { ddb, newPartner } from '../support/fixtures.js';
import { MemoryProfileCache, MemoryRateLimiter } from '../support/memory-verification.js';

/**
 * The verification worker (functions/verify-debtors.ts) on DynamoDB Local. Cases are read from the
 * table (the lifecycle fields are not in the published OpenAPI document yet, which readCase checks). Two kinds of worker
 * meet here: the one the global setup runs behind the local stream poller and retry queue
 * (infra/local/verification-engines.ts, the registry being its own stand-in), which sees every
 * case created; and workers built in this file with their own stand-in, clock and private retry
 * queue, handed the case's stream record directly (delivered twice, or twice at once). Whoever
 * gets there first, a case must end with one outcome and one event per change.
 */
jest.setTimeout(60_000);

const cfg = config();
const client = documentClient(cfg);
const sqs = sqsClient(cfg);

async function until<T>(probe: () => Promise<T | undefined>, ms: number): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`not reached within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function caseItem(mode: Mode, caseId: string): Promise<Record<string, unknown>> {
  const out = await ddb().send(new GetCommand({ TableName: cfg.tableName, Key: keys.case(mode, caseId), ConsistentRead: true }));
  return out.Item!;
}

/** The stream's INSERT record of a case, as the event source mapping delivers it. */
async function insertRecord(mode: Mode, caseId: string, sequence: string): Promise<DynamoDBStreamEvent> {
  const image = marshall(await caseItem(mode, caseId), { removeUndefinedValues: true }) as Record<string, AttributeValue>;
  const key = keys.case(mode, caseId);
  return {
    Records: [
      {
        eventID: sequence,
        eventName: 'INSERT',
        eventSource: 'aws:dynamodb',
        awsRegion: cfg.region,
        dynamodb: {
          Keys: { pk: { S: key.pk }, sk: { S: key.sk } },
          NewImage: image,
          SequenceNumber: sequence,
          StreamViewType: 'NEW_AND_OLD_IMAGES',
        },
      },
    ],
  };
}

async function updatesOf(mode: Mode, companyId: string, caseId: string): Promise<CaseEvent[]> {
  const out = await client.send(
    new QueryCommand({
      TableName: cfg.tableName,
      IndexName: GSI2,
      KeyConditionExpression: 'gsi2pk = :pk',
      FilterExpression: 'caseId = :caseId',
      ExpressionAttributeValues: { ':pk': keys.eventListPartition(mode, companyId, keys.caseListShard(caseId)), ':caseId': caseId },
    }),
  );
  return (out.Items ?? []).map((item) => eventFromItem(item).event).filter((e) => e.type === 'case.updated');
}

/** The global worker's registry stand-in (in the global setup's process): every path asked so far. */
async function globalRegistryRequests(): Promise<string[]> {
  const res = await fetch(`${process.env.COMPANIES_HOUSE_BASE_URL}${REQUEST_LOG_PATH}`);
  return ((await res.json()) as { requests: string[] }).requests;
}

describe('the debtor verification worker', () => {
  let standIn: CompaniesHouseStandIn;
  let queueUrl: string;
  let clock = Date.now();
  let worker: ReturnType<typeof buildVerifyDebtorsHandler>;

  beforeAll(async () => {
    standIn = await startCompaniesHouseStandIn();
    // A queue of this file's own, which no poller reads: what the worker scheduled stays there.
    const created = await sqs.send(new CreateQueueCommand({ QueueName: `verification-retries-${randomBase62(8)}` }));
    queueUrl = created.QueueUrl!;
    const now = () => new Date(clock);
    worker = buildVerifyDebtorsHandler({
      changes: { store: new DynamoCaseChangeStore(client, cfg.tableName), now },
      verifier: {
        registry: new CompaniesHouseRegistry({ baseUrl: standIn.url, apiKey: () => STAND_IN_API_KEY }),
        cache: new MemoryProfileCache(),
        limiter: new MemoryRateLimiter(),
      },
      retries: new SqsVerificationRetries(sqs, queueUrl, now),
    });
  });
  afterAll(async () => {
    await standIn.close();
  });
  beforeEach(() => {
    clock = Date.now();
  });

  const deliver = (event: DynamoDBStreamEvent | SQSEvent) => worker(event, lambdaContext());

  async function createCase(mode: Mode, overrides: Record<string, unknown>, autoAttestation = true) {
    const partner = await newPartner(['cases:read', 'cases:write'], { autoAttestation, mode });
    const fileKey = await uploadInvoice(partner.apiKey);
    const res = await postCases(partner.apiKey, { cases: [validCase(fileKey, overrides)] });
    const id = outcome(res).created[0]!.id;
    return { partner, id };
  }

  it('runs on a local retry queue with the stack’s settings: a visibility timeout six times the worker’s timeout (AWS refuses one below it), and the same dead-letter count', async () => {
    const cfg = config();
    const { Attributes } = await sqsClient(cfg).send(
      new GetQueueAttributesCommand({ QueueUrl: cfg.verificationRetryQueueUrl, AttributeNames: ['VisibilityTimeout', 'RedrivePolicy'] }),
    );
    expect(Number(Attributes!.VisibilityTimeout)).toBe(VERIFIER_RETRY_QUEUE.visibilityTimeoutSeconds);
    expect(VERIFIER_RETRY_QUEUE.visibilityTimeoutSeconds).toBeGreaterThanOrEqual(6 * VERIFIER_FUNCTION_TIMEOUT_SECONDS);
    expect(Number((JSON.parse(Attributes!.RedrivePolicy!) as { maxReceiveCount: string }).maxReceiveCount)).toBe(
      VERIFIER_RETRY_QUEUE.maxReceiveCount,
    );
  });

  it('makes an auto-attested case without a debtorCompanyNo READY within seconds, through the local stream poller', async () => {
    const started = Date.now();
    const { partner, id } = await createCase('live', {});
    const ready = await until(async () => {
      const item = await caseItem('live', id);
      return item.status === 'READY' ? item : undefined;
    }, 10_000);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect((ready.statusHistory as { status: string }[]).map((h) => h.status)).toEqual(['DRAFT', 'READY']);
    expect(await updatesOf('live', partner.companyId, id)).toHaveLength(1);
  });

  it('verifies test-mode debtors from the sandbox within seconds and never calls the registry', async () => {
    const mismatch = await createCase('test', { debtorCompanyNo: '00000409' });
    const other = await createCase('test', { debtorCompanyNo: '05550001', invoiceRef: 'INV-SANDBOX-2' });
    const settled = async (c: typeof mismatch) =>
      until(async () => {
        const item = await caseItem('test', c.id);
        return item.status !== 'DRAFT' ? item : undefined;
      }, 10_000);
    expect(await settled(mismatch)).toMatchObject({
      status: 'ON_HOLD',
      debtorVerification: { status: 'NAME_MISMATCH', registeredName: 'SANDBOX OTHER NAME LIMITED' },
    });
    expect(await settled(other)).toMatchObject({ status: 'READY', debtorVerification: { status: 'VERIFIED' } });
    const asked = await globalRegistryRequests();
    expect(asked.filter((path) => path.includes('00000409') || path.includes('05550001'))).toEqual([]);
  });

  it('writes no second event for a stream record delivered twice', async () => {
    // Awaiting confirmation: only the verification can change it.
    const { partner, id } = await createCase('test', { debtorCompanyNo: '00000410' }, false);
    const record = await insertRecord('test', id, '100');
    expect(await deliver(record)).toEqual({ batchItemFailures: [] });
    expect(await deliver(record)).toEqual({ batchItemFailures: [] });
    const after = await caseItem('test', id);
    expect(after).toMatchObject({ status: 'ON_HOLD', debtorVerification: { status: 'NOT_ACTIVE', companyStatus: 'dissolved' } });
    expect(await updatesOf('test', partner.companyId, id)).toHaveLength(1);
  });

  it('gives two workers verifying one case at once one outcome and one event', async () => {
    const { partner, id } = await createCase('live', { debtorCompanyNo: '01000001' }, false);
    const record = await insertRecord('live', id, '200');
    const results = await Promise.all([deliver(record), deliver(record)]);
    expect(results).toEqual([{ batchItemFailures: [] }, { batchItemFailures: [] }]);
    const after = await until(async () => {
      const item = await caseItem('live', id);
      return (item.debtorVerification as { status: string }).status === 'VERIFIED' ? item : undefined;
    }, 40_000);
    expect(after.statusHistory).toEqual([expect.objectContaining({ status: 'DRAFT' })]);
    expect(await updatesOf('live', partner.companyId, id)).toHaveLength(1);
  });

  it('ends VERIFIED when the registry answers 429 and then 200', async () => {
    const { partner, id } = await createCase('live', { debtorCompanyNo: '01000429' });
    await deliver(await insertRecord('live', id, '300'));
    expect(standIn.requests.filter((p) => p.endsWith('01000429'))).toHaveLength(1);
    // The attempt this worker scheduled comes back when due: its clock moves on, as time would.
    const attrs = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['ApproximateNumberOfMessagesDelayed'] }),
    );
    expect(Number(attrs.Attributes?.ApproximateNumberOfMessagesDelayed)).toBeGreaterThanOrEqual(1);
    clock += 2 * 60 * 60 * 1000;
    const due = {
      caseId: id,
      mode: 'live',
      firstAttemptAt: new Date(clock).toISOString(),
      failures: 1,
      notBefore: new Date(clock).toISOString(),
    };
    const sqsEvent: SQSEvent = {
      Records: [
        {
          messageId: 'm-1',
          receiptHandle: 'r-1',
          body: JSON.stringify(due),
          attributes: { ApproximateReceiveCount: '1', SentTimestamp: '0', SenderId: 'local', ApproximateFirstReceiveTimestamp: '0' },
          messageAttributes: {},
          md5OfBody: '',
          eventSource: 'aws:sqs',
          eventSourceARN: 'arn:aws:sqs:eu-west-2:000000000000:private',
          awsRegion: cfg.region,
        },
      ],
    };
    expect(await deliver(sqsEvent)).toEqual({ batchItemFailures: [] });
    const after = await until(async () => {
      const item = await caseItem('live', id);
      return item.status === 'READY' ? item : undefined;
    }, 40_000);
    expect(after.debtorVerification).toMatchObject({ status: 'VERIFIED' });
    expect(await updatesOf('live', partner.companyId, id)).toHaveLength(1);
  });

  it('leaves an unreadable retry message in its queue for the dead-letter queue, and handles the readable one beside it', async () => {
    const message = (messageId: string, body: string): SQSEvent['Records'][number] => ({
      messageId,
      receiptHandle: `r-${messageId}`,
      body,
      attributes: { ApproximateReceiveCount: '1', SentTimestamp: '0', SenderId: 'local', ApproximateFirstReceiveTimestamp: '0' },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:eu-west-2:000000000000:private',
      awsRegion: cfg.region,
    });
    const readable = {
      caseId: 'case_0000000000000000000000',
      mode: 'live',
      firstAttemptAt: new Date(clock).toISOString(),
      failures: 1,
      notBefore: new Date(clock).toISOString(),
    };
    const result = await deliver({
      Records: [
        message('not-json', '{"caseId": '),
        message('not-an-attempt', JSON.stringify({ caseId: 42 })),
        message('readable', JSON.stringify(readable)),
      ],
    });
    // Reported, so SQS keeps them and its redrive policy moves them to the alarmed dead-letter queue.
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: 'not-json' }, { itemIdentifier: 'not-an-attempt' }] });
  });

  it('keeps a case PENDING when the registry answers 503, and schedules its next attempt on the retry queue', async () => {
    // This file's rate limiter has counted a permit at the 429 test's clock, two hours on: a worker whose clock is
    // behind a counted slot waits for it, so this one's clock starts past that.
    clock = Date.now() + 3 * 60 * 60 * 1000;
    const { partner, id } = await createCase('live', { debtorCompanyNo: '01000500' }, false);
    const before = Number(
      (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['ApproximateNumberOfMessagesDelayed'] })))
        .Attributes?.ApproximateNumberOfMessagesDelayed,
    );
    expect(await deliver(await insertRecord('live', id, '400'))).toEqual({ batchItemFailures: [] });
    expect(standIn.requests.filter((p) => p.endsWith('01000500'))).toHaveLength(1);
    expect(await caseItem('live', id)).toMatchObject({ status: 'DRAFT', debtorVerification: { status: 'PENDING' } });
    const after = Number(
      (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['ApproximateNumberOfMessagesDelayed'] })))
        .Attributes?.ApproximateNumberOfMessagesDelayed,
    );
    expect(after).toBe(before + 1);
    expect(await updatesOf('live', partner.companyId, id)).toHaveLength(0);
    // Nothing was receivable: the message waits for its delay (30 s doubling, with jitter).
    const now = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, WaitTimeSeconds: 0 }));
    expect((now.Messages ?? []).map((m) => retryMessageSchema.parse(JSON.parse(m.Body!))).filter((m) => m.caseId === id)).toEqual([]);
  });
});
