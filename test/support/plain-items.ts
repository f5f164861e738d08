import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';

/**
 * Storage inputs as plain values, whichever client path sent them. The DocumentClient's commands
 * carry plain items until they are marshalled just before serialisation; the case writer sends
 * its transactions as the plain DynamoDB command, items already in AttributeValue form
 * (lib/adapters/dynamodb/attribute-values.ts). Test tools that look into inputs (fault plans,
 * the eventual-consistency mode, the IAM recorder, the partition-heat estimate) read them here.
 */
type Item = Record<string, unknown>;

/** Every item and key of our table has a string `pk`; in AttributeValue form it is `{ S: … }`. */
function isAttributeMap(item: Item | undefined): item is Record<string, AttributeValue> {
  return typeof item?.pk === 'object' && item.pk !== null;
}

function plainItem<T extends Item | undefined>(item: T): T {
  return (isAttributeMap(item) ? unmarshall(item) : item) as T;
}

type TransactEntry = Partial<Record<'Put' | 'Update' | 'Delete' | 'ConditionCheck', Item>>;

/** The input with every transaction item and key plain; any other input as it is. */
export function plainInput(input: Item): Item {
  const entries = input.TransactItems as TransactEntry[] | undefined;
  if (!Array.isArray(entries)) return input;
  return {
    ...input,
    TransactItems: entries.map((entry) =>
      Object.fromEntries(
        Object.entries(entry).map(([kind, action]) => [
          kind,
          action && {
            ...action,
            ...(action.Item ? { Item: plainItem(action.Item as Item) } : {}),
            ...(action.Key ? { Key: plainItem(action.Key as Item) } : {}),
          },
        ]),
      ),
    ),
  };
}
