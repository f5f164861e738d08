import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { QueryCommand, UpdateCommand, type DynamoDBDocumentClient, type QueryCommandInput, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';

/** Every item a query matches, following LastEvaluatedKey page by page (operator listings only). */
export async function queryAll(client: DynamoDBDocumentClient, input: Omit<QueryCommandInput, 'ExclusiveStartKey'>): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const out = await client.send(new QueryCommand({ ...input, ExclusiveStartKey: startKey }));
    items.push(...(out.Items ?? []));
    startKey = out.LastEvaluatedKey;
  } while (startKey);
  return items;
}

/** An update of an item that must already exist: false when it does not (nothing is created). */
export async function updateExisting(client: DynamoDBDocumentClient, input: Omit<UpdateCommandInput, 'ConditionExpression'>): Promise<boolean> {
  try {
    await client.send(new UpdateCommand({ ...input, ConditionExpression: 'attribute_exists(pk)' }));
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
}
