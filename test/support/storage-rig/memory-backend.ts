import { Readable } from 'node:stream';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';

/**
 * An in-process stand-in for DynamoDB and S3 *below* the AWS SDK: it takes the place of the
 * clients' HTTP handler, so every call still goes through the whole SDK pipeline (DocumentClient
 * marshalling, JSON/REST serialisation, SigV4 signing, response parsing, error mapping) and only
 * the network and the storage service are replaced. The recorder's injected delay then stands
 * for the network + service time, which makes "measured latency ÷ (depth × delay)" a measure of
 * the handler's own overhead and of how well it overlaps its calls.
 *
 * Why not DynamoDB Local for this: it serialises transactions (a 100-case batch spends most of
 * its time queueing there, which real DynamoDB does not do) and s3rver answers a HEAD in several
 * milliseconds of its own; both would swamp the 10 ms per-call floor being tested.
 *
 * It implements the operations and expression subset the request paths use: GetItem, PutItem,
 * UpdateItem (SET / ADD / REMOVE, if_not_exists, ReturnValues), DeleteItem, BatchGetItem (whole
 * items, projections ignored, nothing left unprocessed), TransactWriteItems,
 * with condition expressions (AND / OR / NOT, parentheses, comparisons, attribute_exists,
 * attribute_not_exists, map members read as `a.b`) and ReturnValuesOnConditionCheckFailure; and S3 PutObject / HeadObject.
 * Anything else answers a 400 so a gap cannot pass silently.
 */

type Item = Record<string, unknown>;
type Names = Record<string, string> | undefined;
type Values = Record<string, unknown>;

interface HttpRequestLike {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: unknown;
}

interface HttpResponseLike {
  statusCode: number;
  reason?: string;
  headers: Record<string, string>;
  body: Readable;
}

class ConditionFailed extends Error {
  constructor(readonly old: Item | undefined) {
    super('The conditional request failed');
  }
}

class Invalid extends Error {}

// ---------------------------------------------------------------------------------------------
// Expressions

type Token = { kind: 'name' | 'value' | 'ident' | 'op' | 'punct'; text: string };

function tokenize(expression: string): Token[] {
  const tokens: Token[] = [];
  const re = /\s*(?:(#[A-Za-z0-9_]+)|(:[A-Za-z0-9_]+)|([A-Za-z_][A-Za-z0-9_]*)|(<>|<=|>=|=|<|>|\+|-)|([(),.]))/y;
  let index = 0;
  while (index < expression.length) {
    if (/^\s*$/.test(expression.slice(index))) break;
    re.lastIndex = index;
    const m = re.exec(expression);
    if (!m) throw new Invalid(`cannot parse expression at "${expression.slice(index)}"`);
    index = re.lastIndex;
    if (m[1]) tokens.push({ kind: 'name', text: m[1] });
    else if (m[2]) tokens.push({ kind: 'value', text: m[2] });
    else if (m[3]) tokens.push({ kind: 'ident', text: m[3] });
    else if (m[4]) tokens.push({ kind: 'op', text: m[4] });
    else tokens.push({ kind: 'punct', text: m[5]! });
  }
  return tokens;
}

class Parser {
  private i = 0;
  constructor(
    private readonly tokens: Token[],
    private readonly names: Names,
    private readonly values: Values,
  ) {}

  peek(): Token | undefined {
    return this.tokens[this.i];
  }
  next(): Token {
    const t = this.tokens[this.i++];
    if (!t) throw new Invalid('unexpected end of expression');
    return t;
  }
  expect(text: string): void {
    const t = this.next();
    if (t.text !== text) throw new Invalid(`expected "${text}", got "${t.text}"`);
  }
  atKeyword(word: string): boolean {
    const t = this.peek();
    return t?.kind === 'ident' && t.text.toUpperCase() === word;
  }
  done(): boolean {
    return this.i >= this.tokens.length;
  }

  /** A top-level attribute name (what update expressions write). */
  path(): string {
    const [name, ...nested] = this.documentPath();
    if (nested.length > 0) throw new Invalid('nested attribute paths are only read (in conditions), never written, by the request paths');
    return name!;
  }

  /** An attribute path: a name, or map members after dots (a case change's condition reads `debtorVerification.status`). */
  documentPath(): string[] {
    const segments = [this.attributeName()];
    while (this.peek()?.text === '.') {
      this.i++;
      segments.push(this.attributeName());
    }
    return segments;
  }

  private attributeName(): string {
    const t = this.next();
    if (t.kind === 'name') {
      const name = this.names?.[t.text];
      if (name === undefined) throw new Invalid(`undefined attribute name ${t.text}`);
      return name;
    }
    if (t.kind === 'ident') return t.text;
    throw new Invalid(`expected an attribute, got "${t.text}"`);
  }

  operand(item: Item | undefined): unknown {
    const t = this.peek();
    if (t?.kind === 'value') {
      this.i++;
      if (!(t.text in this.values)) throw new Invalid(`undefined attribute value ${t.text}`);
      return this.values[t.text];
    }
    const path = this.documentPath(); // read before the lookup: `item?.[...]` would skip it
    return valueAt(item, path);
  }

  // condition := or
  condition(item: Item | undefined): boolean {
    let result = this.conjunction(item);
    while (this.atKeyword('OR')) {
      this.i++;
      const right = this.conjunction(item);
      result = result || right;
    }
    return result;
  }
  conjunction(item: Item | undefined): boolean {
    let result = this.negation(item);
    while (this.atKeyword('AND')) {
      this.i++;
      const right = this.negation(item);
      result = result && right;
    }
    return result;
  }
  negation(item: Item | undefined): boolean {
    if (this.atKeyword('NOT')) {
      this.i++;
      return !this.negation(item);
    }
    return this.primary(item);
  }
  primary(item: Item | undefined): boolean {
    const t = this.peek();
    if (t?.text === '(') {
      this.i++;
      const inner = this.condition(item);
      this.expect(')');
      return inner;
    }
    if (t?.kind === 'ident' && (t.text === 'attribute_exists' || t.text === 'attribute_not_exists')) {
      this.i++;
      this.expect('(');
      const path = this.documentPath();
      this.expect(')');
      const exists = valueAt(item, path) !== undefined;
      return t.text === 'attribute_exists' ? exists : !exists;
    }
    const left = this.operand(item);
    const op = this.next();
    if (op.kind !== 'op' || op.text === '+' || op.text === '-') throw new Invalid(`expected a comparison, got "${op.text}"`);
    const right = this.operand(item);
    return compare(left, op.text, right);
  }
}

/** The value at an attribute path, undefined when any step is missing or not a map. */
function valueAt(item: Item | undefined, path: readonly string[]): unknown {
  let value: unknown = item;
  for (const name of path) {
    if (typeof value !== 'object' || value === null || Array.isArray(value) || value instanceof Set) return undefined;
    value = (value as Item)[name];
  }
  return value;
}

function compare(left: unknown, op: string, right: unknown): boolean {
  if (left === undefined || right === undefined) return op === '<>' ? left !== right : false;
  if (op === '=' || op === '<>') {
    const equal = JSON.stringify(left) === JSON.stringify(right);
    return op === '=' ? equal : !equal;
  }
  if (typeof left !== typeof right || (typeof left !== 'number' && typeof left !== 'string')) return false;
  const [a, b] = [left as number | string, right as number | string];
  switch (op) {
    case '<':
      return a < b;
    case '<=':
      return a <= b;
    case '>':
      return a > b;
    case '>=':
      return a >= b;
    default:
      throw new Invalid(`unknown comparator ${op}`);
  }
}

function checkCondition(expression: string | undefined, names: Names, values: Values, item: Item | undefined): boolean {
  if (!expression) return true;
  const parser = new Parser(tokenize(expression), names, values);
  const result = parser.condition(item);
  if (!parser.done()) throw new Invalid(`trailing tokens in condition "${expression}"`);
  return result;
}

/** Applies an update expression to a copy of the item; returns the new item and the names it set. */
function applyUpdate(
  expression: string,
  names: Names,
  values: Values,
  old: Item | undefined,
  key: Item,
): { item: Item; updated: string[] } {
  const item: Item = { ...(old ?? key) };
  const updated: string[] = [];
  const parser = new Parser(tokenize(expression), names, values);
  while (!parser.done()) {
    const clause = parser.next().text.toUpperCase();
    do {
      const name = parser.path();
      if (clause === 'SET') {
        parser.expect('=');
        let value = setValue(parser, old);
        const op = parser.peek();
        if (op?.text === '+' || op?.text === '-') {
          parser.next();
          const right = setValue(parser, old);
          value = op.text === '+' ? Number(value) + Number(right) : Number(value) - Number(right);
        }
        item[name] = value;
        updated.push(name);
      } else if (clause === 'ADD') {
        const value = parser.operand(old);
        const current = item[name];
        if (value instanceof Set) item[name] = new Set([...((current as Set<unknown> | undefined) ?? []), ...value]);
        else item[name] = Number(current ?? 0) + Number(value);
        updated.push(name);
      } else if (clause === 'REMOVE') {
        delete item[name];
      } else {
        throw new Invalid(`unsupported update clause ${clause}`);
      }
      if (parser.peek()?.text !== ',') break;
      parser.next();
    } while (!parser.done());
  }
  return { item, updated };
}

function setValue(parser: Parser, old: Item | undefined): unknown {
  if (parser.peek()?.text === 'if_not_exists') {
    parser.next();
    parser.expect('(');
    const name = parser.path();
    parser.expect(',');
    const fallback = parser.operand(old);
    parser.expect(')');
    return old?.[name] !== undefined ? old[name] : fallback;
  }
  return parser.operand(old);
}

// ---------------------------------------------------------------------------------------------
// DynamoDB

interface WriteRequest {
  TableName: string;
  Key?: Record<string, AttributeValue>;
  Item?: Record<string, AttributeValue>;
  UpdateExpression?: string;
  ConditionExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Record<string, AttributeValue>;
  ReturnValues?: string;
  ReturnValuesOnConditionCheckFailure?: string;
}

const plain = (av: Record<string, AttributeValue> | undefined): Item => (av ? unmarshall(av) : {});
const wire = (item: Item): Record<string, AttributeValue> => marshall(item, { removeUndefinedValues: true });

export class MemoryBackend {
  /** Items per table, keyed by `pk \u0000 sk`. */
  private readonly tables = new Map<string, Map<string, Item>>();
  /** S3 objects: `bucket/key` → size. */
  private readonly objects = new Map<string, number>();
  /** Requests served, per operation. */
  readonly served: Record<string, number> = {};
  /** Time spent serving requests (the stand-in's own CPU, which a real service spends remotely). */
  busyMs = 0;

  readonly metadata = { handlerProtocol: 'http/1.1' };

  private table(name: string): Map<string, Item> {
    let table = this.tables.get(name);
    if (!table) this.tables.set(name, (table = new Map()));
    return table;
  }

  private static id(key: Item): string {
    return `${String(key.pk)}\u0000${String(key.sk)}`;
  }

  /** The smithy HttpHandler entry point. */
  async handle(request: HttpRequestLike): Promise<{ response: HttpResponseLike; servedMs: number }> {
    // Answer on a later turn of the event loop, as a socket would.
    await new Promise<void>((resolve) => setImmediate(resolve));
    // The body is read before the clock starts: reading it awaits, and time spent awaiting while
    // other requests are served is not this request's serving time.
    const body = await bodyBytes(request.body);
    const started = performance.now();
    const target = request.headers['x-amz-target'] ?? request.headers['X-Amz-Target'];
    const response = target ? this.dynamo(target.split('.')[1] ?? '', body.toString('utf8')) : this.s3(request, body);
    // Serving is synchronous from here: this is this request's time alone.
    const servedMs = performance.now() - started;
    this.busyMs += servedMs;
    return { response, servedMs };
  }

  updateHttpClientConfig(): void {}
  httpHandlerConfigs(): Record<string, never> {
    return {};
  }
  destroy(): void {}

  private dynamo(operation: string, body: string): HttpResponseLike {
    this.served[operation] = (this.served[operation] ?? 0) + 1;
    const input = JSON.parse(body) as Record<string, unknown>;
    try {
      switch (operation) {
        case 'GetItem': {
          const req = input as unknown as { TableName: string; Key: Record<string, AttributeValue> };
          const item = this.table(req.TableName).get(MemoryBackend.id(plain(req.Key)));
          return json(200, item ? { Item: wire(item) } : {});
        }
        case 'BatchGetItem': {
          const requested = input.RequestItems as Record<string, { Keys: Record<string, AttributeValue>[] }>;
          const responses: Record<string, unknown[]> = {};
          for (const [tableName, { Keys }] of Object.entries(requested)) {
            if (Keys.length > 100) throw new Invalid('Too many items requested for the BatchGetItem call');
            responses[tableName] = Keys.flatMap((key) => {
              const item = this.table(tableName).get(MemoryBackend.id(plain(key)));
              return item ? [wire(item)] : [];
            });
          }
          return json(200, { Responses: responses, UnprocessedKeys: {} });
        }
        case 'PutItem':
        case 'UpdateItem':
        case 'DeleteItem': {
          const req = input as unknown as WriteRequest;
          const apply = this.prepare(operation, req);
          return json(200, apply());
        }
        case 'TransactWriteItems': {
          const items = (input.TransactItems as Record<string, WriteRequest>[]) ?? [];
          // As DynamoDB: at most 100 actions, and never two on the same item.
          if (items.length > 100) throw new Invalid('Member must have length less than or equal to 100');
          const touched = items.map((entry) => {
            const req = Object.values(entry)[0] as WriteRequest & {
              Item?: Record<string, AttributeValue>;
              Key?: Record<string, AttributeValue>;
            };
            const key = plain((req.Item ?? req.Key)!);
            return JSON.stringify([key.pk, key.sk]);
          });
          if (new Set(touched).size !== touched.length)
            throw new Invalid('Transaction request cannot include multiple operations on one item');
          const prepared: (() => unknown)[] = [];
          const reasons: Record<string, unknown>[] = [];
          let failed = false;
          for (const entry of items) {
            const [kind, req] = Object.entries(entry)[0] as [string, WriteRequest];
            const operationName =
              kind === 'Put' ? 'PutItem' : kind === 'Update' ? 'UpdateItem' : kind === 'Delete' ? 'DeleteItem' : 'ConditionCheck';
            try {
              prepared.push(this.prepare(operationName, req));
              reasons.push({ Code: 'None' });
            } catch (error) {
              if (!(error instanceof ConditionFailed)) throw error;
              failed = true;
              reasons.push({
                Code: 'ConditionalCheckFailed',
                Message: 'The conditional request failed',
                ...(error.old && req.ReturnValuesOnConditionCheckFailure === 'ALL_OLD' ? { Item: wire(error.old) } : {}),
              });
            }
          }
          if (failed) {
            return json(400, {
              __type: 'com.amazonaws.dynamodb.v20120810#TransactionCanceledException',
              Message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons.map((r) => r.Code).join(', ')}]`,
              CancellationReasons: reasons,
            });
          }
          for (const apply of prepared) apply();
          return json(200, {});
        }
        default:
          throw new Invalid(`operation ${operation} is not emulated`);
      }
    } catch (error) {
      if (error instanceof ConditionFailed) {
        return json(400, {
          __type: 'com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException',
          message: 'The conditional request failed',
          ...(error.old && (input.ReturnValuesOnConditionCheckFailure as string | undefined) === 'ALL_OLD'
            ? { Item: wire(error.old) }
            : {}),
        });
      }
      if (error instanceof Invalid) return json(400, { __type: 'com.amazon.coral.validate#ValidationException', message: error.message });
      throw error;
    }
  }

  /** Checks the write's condition now (throws ConditionFailed); returns the function that applies it. */
  private prepare(operation: string, req: WriteRequest): () => unknown {
    const table = this.table(req.TableName);
    const values = plain(req.ExpressionAttributeValues);
    const key = operation === 'PutItem' ? plain(req.Item) : plain(req.Key);
    const id = MemoryBackend.id(key);
    const old = table.get(id);
    if (!checkCondition(req.ConditionExpression, req.ExpressionAttributeNames, values, old)) throw new ConditionFailed(old);
    switch (operation) {
      case 'PutItem':
        return () => {
          table.set(id, plain(req.Item));
          return req.ReturnValues === 'ALL_OLD' && old ? { Attributes: wire(old) } : {};
        };
      case 'DeleteItem':
        return () => {
          table.delete(id);
          return req.ReturnValues === 'ALL_OLD' && old ? { Attributes: wire(old) } : {};
        };
      case 'UpdateItem': {
        const { pk, sk } = key;
        const { item, updated } = applyUpdate(req.UpdateExpression ?? '', req.ExpressionAttributeNames, values, old, { pk, sk });
        return () => {
          table.set(id, item);
          switch (req.ReturnValues) {
            case 'ALL_NEW':
              return { Attributes: wire(item) };
            case 'UPDATED_NEW':
              return { Attributes: wire(Object.fromEntries(updated.map((n) => [n, item[n]]))) };
            case 'ALL_OLD':
              return old ? { Attributes: wire(old) } : {};
            default:
              return {};
          }
        };
      }
      case 'ConditionCheck':
        return () => ({});
      default:
        throw new Invalid(`operation ${operation} is not emulated`);
    }
  }

  // -------------------------------------------------------------------------------------------
  // S3 (path-style requests: /bucket/key)

  private s3(request: HttpRequestLike, body: Buffer): HttpResponseLike {
    const path = decodeURIComponent(request.path.replace(/^\//, ''));
    const operation = request.method === 'HEAD' ? 'HeadObject' : request.method === 'PUT' ? 'PutObject' : `S3 ${request.method}`;
    this.served[operation] = (this.served[operation] ?? 0) + 1;
    if (request.method === 'PUT') {
      const size = body.length;
      this.objects.set(path, size);
      return { statusCode: 200, headers: { etag: '"bench"' }, body: Readable.from([]) };
    }
    if (request.method === 'HEAD') {
      const size = this.objects.get(path);
      if (size === undefined) return { statusCode: 404, reason: 'Not Found', headers: {}, body: Readable.from([]) };
      return {
        statusCode: 200,
        headers: {
          'content-length': String(size),
          'content-type': 'application/pdf',
          etag: '"bench"',
          'last-modified': new Date(0).toUTCString(),
        },
        body: Readable.from([]),
      };
    }
    return { statusCode: 400, headers: {}, body: Readable.from([]) };
  }
}

function json(statusCode: number, body: unknown): HttpResponseLike {
  const text = JSON.stringify(body);
  return {
    statusCode,
    headers: {
      'content-type': 'application/x-amz-json-1.0',
      'content-length': String(Buffer.byteLength(text)),
      'x-amzn-requestid': 'bench',
    },
    body: Readable.from([Buffer.from(text)]),
  };
}

/** A request or response body (string, bytes or stream) as bytes. */
export async function bodyBytes(body: unknown): Promise<Buffer> {
  if (body === undefined || body === null) return Buffer.alloc(0);
  if (typeof body === 'string') return Buffer.from(body);
  // Not Buffer.from(body): it calls valueOf(), which the SDK's body wrapper reports as misuse.
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const chunks: Buffer[] = [];
  for await (const chunk of body as AsyncIterable<Buffer | string>) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}
