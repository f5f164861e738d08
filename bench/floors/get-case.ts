import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient } from '../../lib/adapters/dynamodb/dynamo-client.js';
import { floorConfig, keyIdOf, type FloorEvent, type FloorResult } from './env.js';

/**
 * Cold-start floor for GET /api/v1/cases/{id}: the same DocumentClient (production factory), built
 * at load, and the same two storage reads in parallel (the API key, strongly consistent, and the
 * case), with none of the project's code around them: no middy, zod, logger or metrics.
 */
const cfg = floorConfig();
const ddb = createDocumentClient(cfg);

export const handler = async (event: FloorEvent): Promise<FloorResult> => {
  const caseId = event.pathParameters?.id ?? '';
  const [key, found] = await Promise.all([
    ddb.send(new GetCommand({ TableName: cfg.tableName, Key: { pk: `KEY#${keyIdOf(event.headers)}`, sk: 'KEY' }, ConsistentRead: true })),
    ddb.send(new GetCommand({ TableName: cfg.tableName, Key: { pk: `CASE#${caseId}`, sk: 'CASE' } })),
  ]);
  const ok = key.Item !== undefined && found.Item !== undefined;
  return { statusCode: ok ? 200 : 404, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(found.Item ?? {}) };
};
