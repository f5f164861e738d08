import { randomUUID } from 'node:crypto';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { GetCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient } from '../../lib/adapters/dynamodb/dynamo-client.js';
import { createS3Client } from '../../lib/adapters/s3/s3-client.js';
import { floorConfig, keyIdOf, type FloorEvent, type FloorResult } from './env.js';

/**
 * Cold-start floor for POST /api/v1/cases with one case: the same DocumentClient and S3Client
 * (production factories), built at load, and the same storage calls in the same phases: the API
 * key; then the company, the reference counter and a HEAD of the invoice file in parallel; then one
 * three-item TransactWriteItems. JSON in and out, but no validation, middy, zod, logger or metrics.
 */
const cfg = floorConfig();
const ddb = createDocumentClient(cfg);
const s3 = createS3Client(cfg);

export const handler = async (event: FloorEvent): Promise<FloorResult> => {
  const input = (JSON.parse(event.body ?? '{}') as { cases: Record<string, unknown>[] }).cases[0] ?? {};
  const key = await ddb.send(
    new GetCommand({ TableName: cfg.tableName, Key: { pk: `KEY#${keyIdOf(event.headers)}`, sk: 'KEY' }, ConsistentRead: true }),
  );
  const companyId = String(key.Item?.companyId);
  const [, counter] = await Promise.all([
    ddb.send(new GetCommand({ TableName: cfg.tableName, Key: { pk: `COMPANY#${companyId}`, sk: 'PROFILE' }, ConsistentRead: true })),
    ddb.send(
      new UpdateCommand({
        TableName: cfg.tableName,
        Key: { pk: 'COUNTER#CASE_REFERENCE', sk: 'COUNTER' },
        UpdateExpression: 'ADD #seq :n',
        ExpressionAttributeNames: { '#seq': 'sequence' },
        ExpressionAttributeValues: { ':n': 1 },
        ReturnValues: 'UPDATED_NEW',
      }),
    ),
    s3.send(new HeadObjectCommand({ Bucket: cfg.bucketName, Key: String(input.invoiceFileKey) })),
  ]);
  const caseId = `floor_${randomUUID()}`;
  const now = new Date().toISOString();
  await ddb.send(
    new TransactWriteCommand({
      TransactItems: [
        {
          Put: {
            TableName: cfg.tableName,
            Item: { pk: `FLOOR#${companyId}`, sk: `INVREF#${String(input.invoiceRef)}`, caseId },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
        {
          Put: {
            TableName: cfg.tableName,
            Item: { pk: `FLOOR#${caseId}`, sk: 'CASE', ...input, createdAt: now },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
        {
          Put: {
            TableName: cfg.tableName,
            Item: { pk: `FLOOR#${caseId}`, sk: 'ATTESTATION', ...(input.attestation as object), attestedAt: now },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
      ],
    }),
  );
  const body = { created: [{ index: 0, id: caseId, reference: String(counter.Attributes?.sequence) }], rejected: [] };
  return { statusCode: 201, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) };
};
