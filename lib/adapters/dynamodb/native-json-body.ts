import type { TransactWriteItemsCommand, TransactWriteItemsCommandInput } from '@aws-sdk/client-dynamodb';

/** A serialize-step middleware's view of its arguments (the request exists after the serializer). */
interface SerializeArgs {
  input: TransactWriteItemsCommandInput;
  request?: { body?: unknown };
}
type Next = (args: SerializeArgs) => Promise<unknown>;
type Middleware = Parameters<TransactWriteItemsCommand['middlewareStack']['addRelativeTo']>[0];

/**
 * Sends a command's input as its request body through `JSON.stringify`, instead of the SDK's
 * schema serializer, which walks every attribute value and writes the JSON byte by byte: for the
 * 300 items of a 100-case batch that was the largest single cost left on the handler's thread
 * (about 4 ms of 20; docs/performance.md, section 2c). DynamoDB's protocol (AWS JSON 1.0) sends
 * an operation's input as a JSON object with the member names as they are, so for an input
 * already in wire form (items as AttributeValue maps of strings, numbers and booleans; see
 * attribute-values.ts) the two bodies are the same JSON value.
 * `test/unit/adapters/native-json-body.test.ts` holds that against the SDK's own serializer.
 *
 * The serializer also fills in a missing ClientRequestToken (an idempotency token); here the
 * caller must give one (the case writer always does: it is how a retried round is recognised).
 *
 * Only the body changes: the SDK resolves the endpoint from the whole input, builds the request
 * (target and content-type headers) from an empty one, then signs the body actually sent, sends
 * it and parses the answer as usual. Works through the public middleware stack of the one
 * command, so no other command and no client is affected.
 */
export function withNativeJsonBody(command: TransactWriteItemsCommand): TransactWriteItemsCommand {
  // The SDK's serializer fills in a missing idempotency token; this path would send none.
  if (!command.input.ClientRequestToken) throw new Error('a transaction sent with a native JSON body needs its own ClientRequestToken');
  /** Each send's whole input, from the step before the serializer to the step after it. */
  const inputs = new WeakMap<object, TransactWriteItemsCommandInput>();
  const emptyInput = (next: Next, context: object) => (args: SerializeArgs) => {
    inputs.set(context, args.input);
    return next({ ...args, input: { ...args.input, TransactItems: [] } });
  };
  // The SDK's serializer has just put the request on the arguments.
  const nativeBody = (next: Next, context: object) => (args: SerializeArgs) => {
    const input = inputs.get(context);
    if (!args.request || !input) throw new Error('the SDK serializer built no request');
    args.request.body = JSON.stringify(input);
    return next({ ...args, input });
  };
  // After endpoint resolution, which reads the input (the tables a transaction names), and right
  // before the serializer, which then has nothing to walk.
  command.middlewareStack.addRelativeTo(emptyInput as Middleware, { relation: 'after', toMiddleware: 'endpointV2Middleware', name: 'nativeJsonEmptyInput', override: true });
  command.middlewareStack.addRelativeTo(nativeBody as Middleware, { relation: 'after', toMiddleware: 'serializerMiddleware', name: 'nativeJsonBody', override: true });
  return command;
}
