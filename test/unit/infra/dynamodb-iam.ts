import { plainInput } from '../../support/plain-items.js';
import type { Statement } from './synth.js';

/**
 * Just enough of IAM's evaluation to answer "may this role send this DynamoDB item request?" for
 * the statements the stack writes: Allow/Deny, actions, the table or an index as resource, and
 * conditions on dynamodb:LeadingKeys, dynamodb:Attributes, dynamodb:Select and
 * dynamodb:EnclosingOperation with the operators grants.ts uses. An explicit Deny wins; otherwise
 * some Allow must match; anything else is an implicit deny. An operator this evaluator does not
 * know fails the test rather than guessing.
 *
 * A Query is one request: its partition (the key condition's `pk`) as LeadingKeys, the names its
 * ProjectionExpression reads as Attributes and `Select` SPECIFIC_ATTRIBUTES, or, without a
 * projection, no Attributes and `Select` ALL_ATTRIBUTES (DynamoDB's default for a table Query).
 */
export interface ItemRequest {
  action:
    | 'dynamodb:GetItem'
    | 'dynamodb:BatchGetItem'
    | 'dynamodb:PutItem'
    | 'dynamodb:UpdateItem'
    | 'dynamodb:DeleteItem'
    | 'dynamodb:ConditionCheckItem'
    | 'dynamodb:Query';
  leadingKeys: string[];
  attributes: string[];
  enclosingOperation?: 'TransactWriteItems';
  /** A read's Select (Query only here). */
  select?: 'ALL_ATTRIBUTES' | 'SPECIFIC_ATTRIBUTES';
  /** The index a Query reads; absent for the table. */
  index?: string;
}

export type Decision = 'allow' | 'explicit-deny' | 'implicit-deny';

/** IAM's StringLike: `*` any run of characters, `?` one character. */
const like = (pattern: string, value: string): boolean =>
  new RegExp(
    `^${pattern
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
  ).test(value);

function contextValues(request: ItemRequest, key: string): string[] | undefined {
  if (key === 'dynamodb:LeadingKeys') return request.leadingKeys;
  if (key === 'dynamodb:Attributes') return request.attributes;
  if (key === 'dynamodb:EnclosingOperation') return request.enclosingOperation === undefined ? undefined : [request.enclosingOperation];
  if (key === 'dynamodb:Select') return request.select === undefined ? undefined : [request.select];
  throw new Error(`unknown condition key ${key}`);
}

function conditionHolds(operator: string, key: string, expected: string[], request: ItemRequest): boolean {
  const [qualifier, named] = operator.includes(':') ? (operator.split(':') as [string, string]) : [undefined, operator];
  const ifExists = named.endsWith('IfExists');
  const base = ifExists ? named.slice(0, -'IfExists'.length) : named;
  const values = contextValues(request, key);
  if (ifExists && values === undefined) return true;
  const match = (value: string): boolean => {
    if (base === 'StringLike') return expected.some((p) => like(p, value));
    if (base === 'StringEquals') return expected.includes(value);
    if (base === 'StringNotEquals') return !expected.includes(value);
    throw new Error(`unknown operator ${operator}`);
  };
  if (qualifier === 'ForAllValues') return (values ?? []).every(match);
  if (qualifier === 'ForAnyValue') return (values ?? []).some(match);
  if (qualifier !== undefined) throw new Error(`unknown qualifier ${qualifier}`);
  // Single-valued: a missing key matches only the negated operators.
  if (values === undefined) return base.startsWith('StringNot');
  return values.some(match);
}

function statementMatches(statement: Statement, request: ItemRequest): boolean {
  const actions = Array.isArray(statement.Action) ? statement.Action : [statement.Action];
  if (!actions.includes(request.action)) return false;
  // The table's ARN, or an index's (`<table ARN>/index/<name>`): a statement names one or the other.
  const onIndex = JSON.stringify(statement.Resource).includes('/index/');
  if (onIndex !== (request.index !== undefined)) return false;
  for (const [operator, entries] of Object.entries(statement.Condition ?? {})) {
    for (const [key, expected] of Object.entries(entries as Record<string, string | string[]>)) {
      if (!conditionHolds(operator, key, Array.isArray(expected) ? expected : [expected], request)) return false;
    }
  }
  return true;
}

export function decide(statements: Statement[], request: ItemRequest): Decision {
  const matching = statements.filter((s) => statementMatches(s, request));
  if (matching.some((s) => s.Effect === 'Deny')) return 'explicit-deny';
  return matching.some((s) => s.Effect === 'Allow') ? 'allow' : 'implicit-deny';
}

type Input = Record<string, unknown> & {
  IndexName?: string;
  KeyConditionExpression?: string;
  ProjectionExpression?: string;
  ExpressionAttributeValues?: Record<string, unknown>;
  Item?: Record<string, unknown>;
  Key?: Record<string, unknown>;
  UpdateExpression?: string;
  ConditionExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
};

const EXPRESSION_WORDS = new Set([
  'SET',
  'ADD',
  'REMOVE',
  'DELETE',
  'AND',
  'OR',
  'NOT',
  'BETWEEN',
  'IN',
  'attribute_exists',
  'attribute_not_exists',
  'attribute_type',
  'if_not_exists',
  'list_append',
  'begins_with',
  'contains',
  'size',
]);

/** Top-level attribute names an expression reads or writes (placeholders resolved, values skipped). */
function expressionNames(expression: string | undefined, names: Record<string, string> = {}): string[] {
  if (!expression) return [];
  const out: string[] = [];
  for (const match of expression.matchAll(/(^|[^:\w#])([#A-Za-z_][\w]*)/g)) {
    const token = match[2] as string;
    if (EXPRESSION_WORDS.has(token)) continue;
    out.push(token.startsWith('#') ? (names[token] ?? token) : token);
  }
  return out;
}

/** The IAM request context of a DocumentClient command input, as DynamoDB builds it for authorisation. */
export function itemRequest(commandName: string, input: Input, enclosingOperation?: 'TransactWriteItems'): ItemRequest {
  const item = input.Item ?? input.Key ?? {};
  const action = (
    {
      PutCommand: 'dynamodb:PutItem',
      Put: 'dynamodb:PutItem',
      UpdateCommand: 'dynamodb:UpdateItem',
      Update: 'dynamodb:UpdateItem',
      DeleteCommand: 'dynamodb:DeleteItem',
      Delete: 'dynamodb:DeleteItem',
      GetCommand: 'dynamodb:GetItem',
      ConditionCheck: 'dynamodb:ConditionCheckItem',
    } as Record<string, ItemRequest['action']>
  )[commandName];
  if (!action) throw new Error(`no IAM action for ${commandName}`);
  const attributes = new Set([
    ...Object.keys(item),
    ...expressionNames(input.UpdateExpression, input.ExpressionAttributeNames),
    ...expressionNames(input.ConditionExpression, input.ExpressionAttributeNames),
  ]);
  return {
    action,
    leadingKeys: [String(item.pk)],
    attributes: [...attributes].sort(),
    ...(enclosingOperation ? { enclosingOperation } : {}),
  };
}

type Command = { constructor: { name: string }; input: Input & { TransactItems?: Record<string, Input>[] } };

/** The IAM request context of a DocumentClient Query: its partition, and what it projects (module header). */
export function queryRequest(input: Input): ItemRequest {
  const names = input.ExpressionAttributeNames ?? {};
  const partition = /(?:^|\s)(#?\w+)\s*=\s*(:\w+)/.exec(input.KeyConditionExpression ?? '');
  if (!partition) throw new Error(`no partition in ${input.KeyConditionExpression}`);
  const projected = input.ProjectionExpression?.split(',').map((name) => {
    const token = name.trim();
    return token.startsWith('#') ? (names[token] ?? token) : token;
  });
  return {
    action: 'dynamodb:Query',
    leadingKeys: [String(input.ExpressionAttributeValues?.[partition[2] as string])],
    attributes: projected ? [...new Set(projected)].sort() : [],
    select: projected ? 'SPECIFIC_ATTRIBUTES' : 'ALL_ATTRIBUTES',
    ...(input.IndexName ? { index: input.IndexName } : {}),
  };
}

/** Commands that are not item requests (Scan: no function may scan, and none is evaluated here). */
const NOT_ITEM_REQUESTS = new Set(['ScanCommand']);

/**
 * The requests IAM authorises for one DocumentClient command: one for a single-item command or a
 * query, one per key of a batch read, one per part of a transaction.
 */
export function itemRequestsOf(command: Command): ItemRequest[] {
  const name = command.constructor.name;
  if (NOT_ITEM_REQUESTS.has(name)) return [];
  if (name === 'QueryCommand') return [queryRequest(command.input)];
  if (name === 'BatchGetCommand') {
    // IAM authorises a batch read key by key, each against the BatchGetItem action.
    const tables = (command.input as { RequestItems?: Record<string, { Keys: Record<string, unknown>[] }> }).RequestItems ?? {};
    return Object.values(tables).flatMap(({ Keys }) =>
      Keys.map((Key): ItemRequest => ({
        action: 'dynamodb:BatchGetItem',
        leadingKeys: [String(Key.pk)],
        attributes: Object.keys(Key).sort(),
      })),
    );
  }
  if (name === 'TransactWriteCommand' || name === 'TransactWriteItemsCommand') {
    return ((plainInput(command.input).TransactItems ?? []) as Record<string, Input>[]).map((part) => {
      const [kind, input] = Object.entries(part)[0] as [string, Input];
      return itemRequest(kind, input, 'TransactWriteItems');
    });
  }
  return [itemRequest(name, command.input)];
}

/**
 * A stand-in for the DocumentClient that answers every command with `reply` and records the item
 * requests it would have sent (one per part of a transaction). The stores under it are the real ones.
 */
export class RecordingClient {
  readonly requests: ItemRequest[] = [];
  constructor(private readonly reply: (commandName: string) => unknown = () => ({})) {}

  send(command: Command): Promise<unknown> {
    this.requests.push(...itemRequestsOf(command));
    return Promise.resolve(this.reply(command.constructor.name));
  }
}
