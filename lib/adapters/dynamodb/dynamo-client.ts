import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import type { AppConfig } from '../../runtime/config.js';
import { tracer } from '../../runtime/tracer.js';

/**
 * HTTP settings for every storage client. A full batch issues 100 transactions at once, so the
 * socket pool must exceed the SDK default of 50 (or the batch runs in two waves); keep-alive avoids
 * a TLS handshake per call; `throwOnRequestTimeout` makes a stalled call fail instead of only
 * logging a warning, so our own bounded retries can take over.
 */
export const HTTP_SETTINGS = {
  maxSockets: 128,
  connectionTimeoutMs: 1_000,
  requestTimeoutMs: 3_000,
} as const;

export function createHttpHandler(): NodeHttpHandler {
  const agentOptions = { keepAlive: true, maxSockets: HTTP_SETTINGS.maxSockets };
  return new NodeHttpHandler({
    connectionTimeout: HTTP_SETTINGS.connectionTimeoutMs,
    requestTimeout: HTTP_SETTINGS.requestTimeoutMs,
    throwOnRequestTimeout: true,
    httpAgent: new HttpAgent(agentOptions),
    httpsAgent: new HttpsAgent(agentOptions),
  });
}

/**
 * Removes the SDK's logger middleware from a client. With no SDK logger configured (ours: our own
 * log lines are the record) it still builds a redacted copy of every command's input and output
 * for the no-op logger, walking them against the operation's schema: 7 % of the CPU of a 100-case
 * create, whose transactions carry 300 items (docs/performance.md). Should the SDK rename it, the
 * client keeps it (only slower) and a unit test fails
 * (`test/unit/adapters/attribute-values.test.ts`).
 */
export function withoutSdkLogger<T extends { middlewareStack: { remove(name: string): boolean } }>(client: T): T {
  client.middlewareStack.remove('loggerMiddleware');
  return client;
}

/** Dummy credentials for the local stand-ins, which do not check signatures. */
export const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

export function createDocumentClient(cfg: AppConfig): DynamoDBDocumentClient {
  // Traced before the DocumentClient wraps it: the DocumentClient shares this middleware stack.
  const base = tracer.captureAWSv3Client(
    new DynamoDBClient({
      region: cfg.region,
      requestHandler: createHttpHandler(),
      // One retry layer (lib/adapters/retry.ts) with a per-request budget and deadline: the SDK's own
      // retries would multiply with it and ignore the request's remaining time.
      maxAttempts: 1,
      ...(cfg.dynamoEndpoint ? { endpoint: cfg.dynamoEndpoint, credentials: LOCAL_CREDENTIALS } : {}),
    }),
  );
  withoutSdkLogger(base);
  return DynamoDBDocumentClient.from(base, {
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
  });
}

let shared: DynamoDBDocumentClient | undefined;

/** One DocumentClient per process, created on first use and reused across invocations. */
export function documentClient(cfg: AppConfig): DynamoDBDocumentClient {
  shared ??= createDocumentClient(cfg);
  return shared;
}
