import { InvokeStore, InvokeStoreBase } from '@aws/lambda-invoke-store';
import type { Context } from 'aws-lambda';

/**
 * Local invocations each in their own InvokeStore scope, as Lambda runs the concurrent invocations
 * of one execution environment (`AWS_LAMBDA_MAX_CONCURRENCY` set). Locally every function shares
 * one process and one Powertools logger: without scopes, the Lambda context and log keys of
 * whichever invocation started last labelled every line (an API request logged as
 * `fan-out-webhook-events`, or with another request's company). With scopes enabled Powertools
 * keeps them per invocation; npm start enables them, the tests and the bench leave them off.
 */
let store: InvokeStoreBase | undefined;

/** Turns scopes on for this process: before any function logs (Powertools then requires the store). */
export async function enableInvocationScopes(): Promise<void> {
  process.env.AWS_LAMBDA_MAX_CONCURRENCY ||= '64';
  store = await InvokeStore.getInstanceAsync(true);
}

/** Runs one invocation in its own scope once scopes are enabled; as it is otherwise. */
export function runInInvocationScope<T>(context: Pick<Context, 'awsRequestId'>, invoke: () => T): T {
  if (!store) return invoke();
  return store.run({ [InvokeStoreBase.PROTECTED_KEYS.REQUEST_ID]: context.awsRequestId }, invoke);
}
