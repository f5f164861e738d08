import { marshall } from '@aws-sdk/util-dynamodb';
import { attributeMap, attributeValue } from '../../../lib/adapters/dynamodb/attribute-values.js';
import { withoutSdkLogger } from '../../../lib/adapters/dynamodb/dynamo-client.js';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';

describe('items written in AttributeValue form', () => {
  const stored = {
    caseId: 'case_1',
    principalPence: 125050,
    b2b: true,
    debtorName: 'Zoë & Søn "Ltd"\n',
    description: undefined,
    empty: '',
  };

  it('are what the DocumentClient would have sent for the same flat item', () => {
    expect(attributeMap(stored)).toEqual(marshall(stored, { removeUndefinedValues: true }));
  });

  it('merge their parts the way an object spread does, an undefined attribute left out', () => {
    expect(attributeMap({ pk: 'CASE#1', sk: 'CASE' }, { type: 'CASE', note: 'first' }, { note: 'second' }, { type: undefined })).toEqual({
      pk: { S: 'CASE#1' },
      sk: { S: 'CASE' },
      note: { S: 'second' },
    });
  });

  it('refuse a number DynamoDB could not store exactly, and anything that is not flat', () => {
    expect(() => attributeValue(Number.NaN, 'principalPence')).toThrow(/principalPence/);
    expect(() => attributeValue(Number.POSITIVE_INFINITY)).toThrow(RangeError);
    expect(() => attributeValue(2 ** 53 + 2)).toThrow(RangeError);
    expect(attributeValue(0.5)).toEqual({ N: '0.5' });
    expect(() => attributeMap({ nested: { a: 1 } } as unknown as { nested: string })).toThrow(/nested.*object/);
  });
});

describe('storage clients', () => {
  it('carry no SDK logger middleware (a client as the SDK makes it has one under that name)', () => {
    const plain = new DynamoDBClient({ region: 'eu-west-2' });
    expect(plain.middlewareStack.identify().some((name) => name.startsWith('loggerMiddleware'))).toBe(true);
    const client = withoutSdkLogger(new DynamoDBClient({ region: 'eu-west-2' }));
    expect(client.middlewareStack.identify().some((name) => name.startsWith('loggerMiddleware'))).toBe(false);
    plain.destroy();
    client.destroy();
  });
});
