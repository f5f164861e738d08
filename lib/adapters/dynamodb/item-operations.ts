import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { withRetries } from '../retry.js';
import {
  QueryCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
  type QueryCommandInput,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';

/** Every item a query matches, following LastEvaluatedKey page by page (operator listings only). */
export async function queryAll(
  client: DynamoDBDocumentClient,
  input: Omit<QueryCommandInput, 'ExclusiveStartKey'>,
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const command = new QueryCommand({ ...input, ExclusiveStartKey: startKey });
    const out = await withRetries((options) => client.send(command, options));
    items.push(...(out.Items ?? []));
    startKey = out.LastEvaluatedKey;
  } while (startKey);
  return items;
}

/** An update of an item that must already exist: false when it does not (nothing is created). */
export async function updateExisting(
  client: DynamoDBDocumentClient,
  input: Omit<UpdateCommandInput, 'ConditionExpression'>,
): Promise<boolean> {
  try {
    const command = new UpdateCommand({ ...input, ConditionExpression: 'attribute_exists(pk)' });
    await withRetries((options) => client.send(command, options));
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
}
