import { TransactWriteItemsCommand } from '@aws-sdk/client-dynamodb';
import { capturingDynamoClient } from '../../support/capturing-dynamodb-client.js';

describe('the wire-level test client', () => {
  it('reads the body the SDK sends as bytes, without the string conversion a future SDK turns into an error', async () => {
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      const { client, sent } = capturingDynamoClient();
      const input = { ClientRequestToken: 'token-1', TransactItems: [{ Put: { TableName: 't', Item: { pk: { S: 'Zoë 🧾' } } } }] };
      await client.send(new TransactWriteItemsCommand(input));
      expect(JSON.parse(sent[0]!.body)).toEqual(input);
      expect(warn.mock.calls.map((args) => String(args[0]))).toEqual([]);
      client.destroy();
    } finally {
      warn.mockRestore();
    }
  });
});
