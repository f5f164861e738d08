import { DynamoDBClient, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { config } from '../../lib/runtime/config.js';
import { createHttpHandler, LOCAL_CREDENTIALS } from '../../lib/adapters/dynamodb/dynamo-client.js';

/**
 * A DocumentClient over DynamoDB Local that injects faults into chosen calls: throttling,
 * transaction conflicts, timeouts, and lost responses (the call succeeds, the reply is lost).
 * DynamoDB Local serialises transactions, so real conflicts never happen locally.
 */
export type Fault = 'throttle' | 'conflict' | 'timeout' | 'lost-response' | 'internal';

export interface FaultPlan {
  /** Decides, per storage call, whether to inject a fault. */
  decide(commandName: string, input: Record<string, unknown>): Fault | undefined;
}

export interface FaultCounter {
  injected: Record<Fault, number>;
  calls: number;
}

function makeError(fault: Exclude<Fault, 'lost-response'>, itemCount: number): Error {
  switch (fault) {
    case 'throttle':
      return Object.assign(new Error('Rate of requests exceeds the allowed throughput.'), { name: 'ThrottlingException', $metadata: { httpStatusCode: 400 } });
    case 'conflict':
      return new TransactionCanceledException({
        message: 'Transaction cancelled, please refer cancellation reasons for specific reasons [TransactionConflict]',
        $metadata: { httpStatusCode: 400 },
        CancellationReasons: Array.from({ length: Math.max(1, itemCount) }, (_, i) => ({ Code: i === 0 ? 'TransactionConflict' : 'None' })),
      });
    case 'timeout':
      return Object.assign(new Error('Request timed out'), { name: 'TimeoutError' });
    case 'internal':
      return Object.assign(new Error('Internal server error'), { name: 'InternalServerError', $metadata: { httpStatusCode: 500 } });
  }
}

interface StackLike {
  add(middleware: (next: (args: { input: unknown }) => Promise<unknown>, context: { commandName?: string }) => (args: { input: unknown }) => Promise<unknown>, options: { step: 'initialize'; name: string }): void;
}

/** Adds the fault-injecting middleware to a client's stack; S3 has no transactions, so a conflict there is an internal error. */
function injectFaults(stack: StackLike, plan: FaultPlan, transactional: boolean): FaultCounter {
  const counter: FaultCounter = { injected: { throttle: 0, conflict: 0, timeout: 0, 'lost-response': 0, internal: 0 }, calls: 0 };
  stack.add(
    (next, context) => async (args) => {
      counter.calls++;
      const input = args.input as Record<string, unknown>;
      const fault = plan.decide(context.commandName ?? '', input);
      if (!fault) return next(args);
      counter.injected[fault]++;
      if (fault === 'lost-response') {
        await next(args);
        throw makeError('timeout', 0);
      }
      if (!transactional && fault === 'conflict') throw makeError('internal', 0);
      throw makeError(fault, (input.TransactItems as unknown[] | undefined)?.length ?? 0);
    },
    { step: 'initialize', name: 'faultInjection' },
  );
  return counter;
}

export function faultyDocumentClient(plan: FaultPlan): { client: DynamoDBDocumentClient; counter: FaultCounter } {
  const cfg = config();
  const base = new DynamoDBClient({
    region: cfg.region,
    endpoint: cfg.dynamoEndpoint,
    credentials: LOCAL_CREDENTIALS,
    requestHandler: createHttpHandler(),
    // Our own retries are under test: the SDK's would hide the injected faults.
    maxAttempts: 1,
  });
  const counter = injectFaults(base.middlewareStack as unknown as StackLike, plan, true);
  return { client: DynamoDBDocumentClient.from(base, { marshallOptions: { removeUndefinedValues: true } }), counter };
}

/** An S3 client over the local S3 whose calls can fail the same way. */
export function faultyS3Client(plan: FaultPlan): { client: S3Client; counter: FaultCounter } {
  const cfg = config();
  const client = new S3Client({
    region: cfg.region,
    endpoint: cfg.s3Endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    maxAttempts: 1,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  const counter = injectFaults(client.middlewareStack as unknown as StackLike, plan, false);
  return { client, counter };
}
