import { Readable } from 'node:stream';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';

export interface SentRequest {
  headers: Record<string, string>;
  body: string;
}

/**
 * A DynamoDB client whose transport records each request (headers and body as sent, after signing)
 * and answers 200 `{}`: for checking what goes on the wire without a network or a store.
 */
const utf8 = new TextDecoder('utf-8', { fatal: true });

export function capturingDynamoClient(): { client: DynamoDBClient; sent: SentRequest[] } {
  const sent: SentRequest[] = [];
  const requestHandler = {
    metadata: { handlerProtocol: 'http/1.1' },
    handle: (request: { headers: Record<string, string>; body?: unknown }) => {
      const body = request.body;
      // The SDK hands over its JSON body as bytes (a Uint8Array that also answers string methods,
      // with a warning that a later SDK turns into an error): decode the bytes, never ask it for a string.
      sent.push({ headers: { ...request.headers }, body: typeof body === 'string' ? body : utf8.decode(body as Uint8Array) });
      return Promise.resolve({
        response: { statusCode: 200, headers: { 'content-type': 'application/x-amz-json-1.0' }, body: Readable.from([Buffer.from('{}')]) },
      });
    },
    updateHttpClientConfig: () => undefined,
    httpHandlerConfigs: () => ({}),
    destroy: () => undefined,
  };
  const client = new DynamoDBClient({
    region: 'eu-west-2',
    maxAttempts: 1,
    credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
    requestHandler,
  });
  return { client, sent };
}
