import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { gatewayProblemResult, gatewayResponse } from '../contract/problem-responses.js';
import { API_GATEWAY_INTEGRATION_TIMEOUT_MS } from '../contract/route-table.js';
import { lambdaContext } from './lambda-events.js';
import { runInInvocationScope } from './run-in-invocation-scope.js';

/**
 * Runs a handler the way Lambda behind API Gateway does, for the local server and
 * `npm run invoke`: the Lambda context counts down from the function's timeout, and the caller
 * gets what API Gateway would answer when the function fails to:
 * - it overruns its own timeout (Lambda ends it with "Task timed out"): 502, DEFAULT_5XX;
 * - API Gateway's integration timeout (29 s) passes first: 504 GATEWAY_TIMEOUT, INTEGRATION_TIMEOUT;
 * - it throws, or returns something that is not a proxy result: 502, DEFAULT_5XX.
 * Bodies and headers are API Gateway's (problem-responses.ts), with the event's request id.
 *
 * Lambda would stop an overrunning invocation; in one Node.js process it cannot be stopped, so it
 * runs on and its late result is dropped (as API Gateway drops it).
 */
export type LambdaHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

export interface InvokeOptions {
  functionName: string;
  /** The function's timeout (route-table.ts). */
  timeoutMs: number;
  memoryMb?: number;
  /** API Gateway's integration timeout; only `npm run invoke`'s Lambda-only view or tests change it. */
  integrationTimeoutMs?: number;
}

export type InvocationOutcome = 'answered' | 'function-timeout' | 'integration-timeout' | 'function-error' | 'malformed-result';

export interface Invocation {
  outcome: InvocationOutcome;
  /** What the caller receives through API Gateway. */
  result: APIGatewayProxyResult;
  /** For a failed invocation, what Lambda or API Gateway reports (never sent to the caller). */
  failure?: string;
}

/** API Gateway's status for a function error, a malformed result or a function timeout. */
export const FUNCTION_ERROR_STATUS = 502;

function isProxyResult(value: unknown): value is APIGatewayProxyResult {
  if (typeof value !== 'object' || value === null) return false;
  const { statusCode, body } = value as { statusCode?: unknown; body?: unknown };
  return (
    Number.isInteger(statusCode) &&
    (statusCode as number) >= 100 &&
    (statusCode as number) <= 599 &&
    (body === undefined || body === null || typeof body === 'string')
  );
}

export async function invokeWithDeadline(handler: LambdaHandler, event: APIGatewayProxyEvent, options: InvokeOptions): Promise<Invocation> {
  const started = Date.now();
  const functionDeadline = started + options.timeoutMs;
  const integrationTimeoutMs = options.integrationTimeoutMs ?? API_GATEWAY_INTEGRATION_TIMEOUT_MS;
  // When both would end at the same moment, API Gateway's answer is the one the caller sees.
  const gatewayFirst = integrationTimeoutMs <= options.timeoutMs;
  const context = lambdaContext({ functionName: options.functionName, memoryMb: options.memoryMb, deadlineMs: functionDeadline });
  const requestId = event.requestContext.requestId;
  const functionError = (outcome: InvocationOutcome, failure: string): Invocation => ({
    outcome,
    failure,
    result: gatewayProblemResult(gatewayResponse('DEFAULT_5XX'), requestId, { status: FUNCTION_ERROR_STATUS }),
  });

  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<'expired'>((resolve) => {
    timer = setTimeout(() => resolve('expired'), Math.min(options.timeoutMs, integrationTimeoutMs));
  });
  const run = Promise.resolve()
    .then(() => runInInvocationScope(context, () => handler(event, context)))
    .then(
      (result) => ({ result }),
      (error: unknown) => ({ error }),
    );
  const first = await Promise.race([run, expired]);
  clearTimeout(timer);

  if (first === 'expired') {
    if (gatewayFirst) {
      return {
        outcome: 'integration-timeout',
        failure: `Endpoint request timed out: API Gateway's integration timeout (${integrationTimeoutMs} ms) passed before ${options.functionName} answered`,
        result: gatewayProblemResult(gatewayResponse('INTEGRATION_TIMEOUT'), requestId),
      };
    }
    return functionError(
      'function-timeout',
      `Task timed out after ${(options.timeoutMs / 1000).toFixed(2)} seconds (${options.functionName}'s timeout)`,
    );
  }
  if ('error' in first) return functionError('function-error', `${options.functionName} threw: ${(first.error as Error)?.name ?? 'Error'}`);
  if (!isProxyResult(first.result))
    return functionError('malformed-result', `${options.functionName} returned a malformed Lambda proxy response`);
  return { outcome: 'answered', result: first.result };
}
