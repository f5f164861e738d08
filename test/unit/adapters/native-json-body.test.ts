import { TransactWriteItemsCommand, type TransactWriteItemsCommandInput } from '@aws-sdk/client-dynamodb';
import { capturingDynamoClient, type SentRequest } from '../../support/capturing-dynamodb-client.js';
import { withNativeJsonBody } from '../../../lib/adapters/dynamodb/native-json-body.js';
import { attributeMap } from '../../../lib/adapters/dynamodb/attribute-values.js';

const awkward = ['plain', 'quote " backslash \\ slash /', 'tab\tnewline\ncr\r nul\u0000 bell\u0007', 'line sep \u2028 para \u2029', 'Zoë Søn Ünïcode', 'emoji 🧾💷', '', ' '.repeat(3), '<script>&amp;</script>', 'x'.repeat(5000)];

function transaction(): TransactWriteItemsCommandInput {
  return {
    ClientRequestToken: 'token-1234567890',
    TransactItems: awkward.flatMap((text, i) => [
      {
        Put: {
          TableName: 'partner-cases',
          Item: attributeMap({ pk: `INVREF#cmp_1#${text}`, sk: 'GUARD' }, { invoiceRef: text, principalPence: 125050 + i, b2b: i % 2 === 0, ratio: 0.5 }),
          ConditionExpression: 'attribute_not_exists(pk)',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
        },
      },
      { Put: { TableName: 'partner-cases', Item: attributeMap({ pk: `CASE#case_${i}`, sk: 'CASE', debtorName: text }), ConditionExpression: 'attribute_not_exists(pk)' } },
    ]),
  };
}

describe('a transaction sent with a native JSON body', () => {
  it('carries the same JSON value, to the same operation, as the SDK serializer would send', async () => {
    const { client, sent } = capturingDynamoClient();
    await client.send(new TransactWriteItemsCommand(transaction()));
    await client.send(withNativeJsonBody(new TransactWriteItemsCommand(transaction())));
    const [sdk, native] = sent as [SentRequest, SentRequest];
    expect(JSON.parse(native.body)).toEqual(JSON.parse(sdk.body));
    expect(JSON.parse(native.body)).toEqual(transaction());
    // And it really was the native path (the SDK writes members in its schema's order).
    expect(native.body).toBe(JSON.stringify(transaction()));
    expect(sdk.body).not.toBe(native.body);
    for (const header of ['x-amz-target', 'content-type', 'host']) expect(native.headers[header]).toBe(sdk.headers[header]);
    expect(native.headers['x-amz-target']).toBe('DynamoDB_20120810.TransactWriteItems');
    // Signed over the body actually sent: the signature covers the payload hash.
    expect(native.headers['x-amz-content-sha256'] ?? native.headers.authorization).toBeDefined();
    expect(Number(native.headers['content-length'])).toBe(Buffer.byteLength(native.body));
    client.destroy();
  });

  it('goes to the endpoint the whole input resolves to (a table named by the ARN of another account)', async () => {
    const { client, sent } = capturingDynamoClient();
    const byArn = (): TransactWriteItemsCommandInput => ({
      ...transaction(),
      TransactItems: transaction().TransactItems!.map((item) => ({ Put: { ...item.Put!, TableName: 'arn:aws:dynamodb:eu-west-2:999999999999:table/partner-cases' } })),
    });
    await client.send(new TransactWriteItemsCommand(byArn()));
    await client.send(withNativeJsonBody(new TransactWriteItemsCommand(byArn())));
    const [sdk, native] = sent as [SentRequest, SentRequest];
    expect(sdk.headers.host).toContain('999999999999');
    expect(native.headers.host).toBe(sdk.headers.host);
    client.destroy();
  });

  it('changes nothing for other commands sent through the same client', async () => {
    const { client, sent } = capturingDynamoClient();
    const marked = withNativeJsonBody(new TransactWriteItemsCommand(transaction()));
    await client.send(marked);
    await client.send(new TransactWriteItemsCommand({ TransactItems: [] }));
    expect(JSON.parse(sent[1]!.body)).toEqual({ TransactItems: [], ClientRequestToken: expect.any(String) as string });
    client.destroy();
  });

  it('is refused without a ClientRequestToken, which only the SDK serializer would have filled in', () => {
    const { ClientRequestToken: _token, ...withoutToken } = transaction();
    expect(() => withNativeJsonBody(new TransactWriteItemsCommand(withoutToken))).toThrow(/ClientRequestToken/);
  });
});
