import { createHash, randomUUID } from 'node:crypto';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import {
  GetCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
  type TransactWriteCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { standaloneDeadline, type Deadline } from '../../deadline.js';
import { WebhookEndpointLimitError } from '../../errors.js';
import { storedMode, type Mode } from '../../mode.js';
import { failureRecord, QUIET_GAP_MS, type EndpointHealth } from '../../webhooks/endpoint-health.js';
import type { WebhookEndpointStore } from '../../webhooks/ports.js';
import type { EndpointSecret } from '../../webhooks/signature.js';
import type { WebhookEndpoint } from '../../webhooks/webhook-endpoint.js';
import { DEFAULT_RETRY_POLICY, isTransactionCancelled, withRetries, type RetryPolicy } from '../retry.js';
import type { SealedValue, SecretBox } from '../webhooks/secret-box.js';
import { ITEM_TYPES, keys, WEBHOOK_ENDPOINT_SK_PREFIX, type ItemKey } from './table-keys.js';

/** The counter update is the second action of a create: its failed condition means "the limit is reached". */
const COUNTER_ACTION = 1;
const SECRETS_ATTRIBUTE = 'sealedSecrets';
/** Rounds of a health write whose stored run changed under it (each failed condition shows the new one). */
const HEALTH_ROUNDS = 4;

/**
 * Every attribute of an endpoint item except its sealed secrets: what a read that needs no secret
 * projects, so the function never receives them (and IAM can refuse it anything more:
 * infra/stack/grants.ts grants the list and the fan-out a Query of these attributes only).
 */
export const ENDPOINT_VIEW_ATTRIBUTES = [
  'pk',
  'sk',
  'gsi1pk',
  'gsi1sk',
  'type',
  'endpointId',
  'companyId',
  'mode',
  'url',
  'events',
  'description',
  'status',
  'disabledReason',
  'failingSince',
  'lastFailureAt',
  'createdAt',
  'updatedAt',
  'version',
] as const;

/** An endpoint's delivery health (endpoint-health.ts): written by recordHealth only, and removed when a PATCH enables it again. */
export const ENDPOINT_HEALTH_ATTRIBUTES = ['failingSince', 'lastFailureAt'] as const;

/**
 * What an update of an endpoint's settings (PATCH, rotate-secret) may write or read in its
 * condition: the settings, the version and the sealed secrets, and the health it removes when it
 * enables a disabled endpoint. Never anything else of the item.
 */
export const ENDPOINT_SETTINGS_ATTRIBUTES = [
  'pk',
  'sk',
  'url',
  'events',
  'description',
  'status',
  'disabledReason',
  'updatedAt',
  'version',
  SECRETS_ATTRIBUTE,
  ...ENDPOINT_HEALTH_ATTRIBUTES,
] as const;

/** The projection of ENDPOINT_VIEW_ATTRIBUTES, every name a placeholder (several are reserved words). */
const VIEW_PROJECTION = {
  ProjectionExpression: ENDPOINT_VIEW_ATTRIBUTES.map((_, i) => `#v${i}`).join(', '),
  ExpressionAttributeNames: Object.fromEntries(ENDPOINT_VIEW_ATTRIBUTES.map((name, i) => [`#v${i}`, name])),
};

/**
 * Webhook endpoints in the table (table-keys.ts: `WHEP#<m><companyId>` / `EP#<id>`, with the
 * company-and-mode counter `COUNT` in the same partition).
 *
 * The limit under races: a create is one transaction of the endpoint's Put and the counter's
 * Update `endpointCount < max`, so however many creates run at once, at most `max` commit (a
 * count read first and checked after would let 20 concurrent creates all see 15). A delete takes
 * the count down in the same transaction as the Delete. DynamoDB answers concurrent transactions on
 * one counter with TransactionConflict, which the retry layer retries.
 *
 * Secrets: sealed (secret-box.ts) with the item's own key as context; the list projects every
 * attribute but the sealed one (ENDPOINT_VIEW_ATTRIBUTES), so the list and the fan-out never
 * receive it, and need no key.
 */
export class DynamoWebhookEndpointStore implements WebhookEndpointStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    /** Only the functions that create or rotate secrets are given the key (the others never touch a secret). */
    private readonly secretBox?: (deadline?: Deadline) => Promise<SecretBox>,
    private readonly policy: RetryPolicy = DEFAULT_RETRY_POLICY,
  ) {}

  async create(
    endpoint: WebhookEndpoint,
    secrets: readonly EndpointSecret[],
    maxPerMode: number,
    deadline: Deadline = standaloneDeadline(),
  ): Promise<void> {
    const { mode, companyId } = endpoint;
    const counter = keys.webhookEndpointCounter(mode, companyId);
    // A test counter carries its test-data listing too, so clear-test-data removes it with the endpoints.
    const listing = keys.withTestDataListing(mode, companyId, counter) as Partial<Record<'gsi1pk' | 'gsi1sk', string>>;
    const listed = listing.gsi1pk !== undefined && listing.gsi1sk !== undefined;
    const input: TransactWriteCommandInput = {
      TransactItems: [
        {
          Put: {
            TableName: this.tableName,
            Item: await this.item(endpoint, secrets, deadline),
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
        {
          Update: {
            TableName: this.tableName,
            Key: counter,
            UpdateExpression: `SET #type = :type, companyId = :companyId, #mode = :mode${listed ? ', gsi1pk = :gsi1pk, gsi1sk = :gsi1sk' : ''} ADD endpointCount :one`,
            ConditionExpression: 'attribute_not_exists(endpointCount) OR endpointCount < :max',
            ExpressionAttributeNames: { '#type': 'type', '#mode': 'mode' },
            ExpressionAttributeValues: {
              ':type': ITEM_TYPES.webhookEndpointCounter,
              ':companyId': companyId,
              ':mode': mode,
              ':one': 1,
              ':max': maxPerMode,
              ...(listed ? { ':gsi1pk': listing.gsi1pk, ':gsi1sk': listing.gsi1sk } : {}),
            },
          },
        },
      ],
      // A retry of an attempt whose answer was lost is the same transaction to DynamoDB (10 minutes), not a second create.
      ClientRequestToken: createHash('sha256').update(endpoint.endpointId).digest('hex').slice(0, 36),
    };
    try {
      await withRetries((options) => this.client.send(new TransactWriteCommand(input), options), deadline, this.policy);
    } catch (error) {
      const reasons = (error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons;
      if (isTransactionCancelled(error) && reasons?.[COUNTER_ACTION]?.Code === 'ConditionalCheckFailed')
        throw new WebhookEndpointLimitError(maxPerMode);
      throw error;
    }
  }

  async list(mode: Mode, companyId: string, deadline: Deadline = standaloneDeadline()): Promise<WebhookEndpoint[]> {
    const endpoints: WebhookEndpoint[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const command = new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :sk)',
        ExpressionAttributeValues: { ':pk': keys.webhookEndpointPartition(mode, companyId), ':sk': WEBHOOK_ENDPOINT_SK_PREFIX },
        ...VIEW_PROJECTION,
        // Named, not implied by the projection: the grant requires Select SPECIFIC_ATTRIBUTES (grants.ts).
        Select: 'SPECIFIC_ATTRIBUTES',
        ConsistentRead: true,
        ExclusiveStartKey: startKey,
      });
      const out = await withRetries((options) => this.client.send(command, options), deadline, this.policy);
      for (const item of out.Items ?? []) endpoints.push(endpointOf(item));
      startKey = out.LastEvaluatedKey;
    } while (startKey);
    return endpoints;
  }

  async get(
    mode: Mode,
    companyId: string,
    endpointId: string,
    deadline: Deadline = standaloneDeadline(),
  ): Promise<WebhookEndpoint | undefined> {
    const item = await this.read(keys.webhookEndpoint(mode, companyId, endpointId), deadline);
    return item && endpointOf(item);
  }

  async getWithSecrets(mode: Mode, companyId: string, endpointId: string, deadline: Deadline = standaloneDeadline()) {
    const item = await this.read(keys.webhookEndpoint(mode, companyId, endpointId), deadline);
    return item && this.withSecretsOf(item, deadline);
  }

  /** An endpoint item read whole (here, or by a batch read of the delivery function: webhook-delivery-reads.ts), its secrets opened. */
  async withSecretsOf(item: Record<string, unknown>, deadline: Deadline = standaloneDeadline()) {
    // Sealed for this item's own key: a sealed value copied to another item does not open there.
    const key: ItemKey = { pk: item.pk as string, sk: item.sk as string };
    const box = await this.box(deadline);
    const secrets = JSON.parse(box.open(item[SECRETS_ATTRIBUTE] as SealedValue, context(key))) as EndpointSecret[];
    return { endpoint: endpointOf(item), secrets };
  }

  async update(
    endpoint: WebhookEndpoint,
    expectedVersion: number,
    secrets: readonly EndpointSecret[] | undefined,
    deadline: Deadline = standaloneDeadline(),
    options: { resetHealth?: boolean } = {},
  ): Promise<'updated' | 'stale' | 'gone'> {
    const key = keys.webhookEndpoint(endpoint.mode, endpoint.companyId, endpoint.endpointId);
    // Only the settings are written (ENDPOINT_SETTINGS_ATTRIBUTES), never the whole item: a Put of
    // the endpoint as read would also write back the delivery health it was read with, undoing a
    // health write made meanwhile (health writes leave the version alone). The sealed secrets
    // are kept as stored unless new ones are given.
    const names: Record<string, string> = {
      '#url': 'url',
      '#events': 'events',
      '#description': 'description',
      '#status': 'status',
      '#updatedAt': 'updatedAt',
      '#version': 'version',
      '#disabledReason': 'disabledReason',
    };
    const values: Record<string, unknown> = {
      ':url': endpoint.url,
      ':events': endpoint.events,
      ':description': endpoint.description,
      ':status': endpoint.status,
      ':updatedAt': endpoint.updatedAt,
      ':version': endpoint.version,
      ':expected': expectedVersion,
    };
    const sets = [
      '#url = :url',
      '#events = :events',
      '#description = :description',
      '#status = :status',
      '#updatedAt = :updatedAt',
      '#version = :version',
    ];
    const removes: string[] = [];
    if (endpoint.disabledReason !== undefined) {
      sets.push('#disabledReason = :disabledReason');
      values[':disabledReason'] = endpoint.disabledReason;
    } else removes.push('#disabledReason');
    if (secrets) {
      sets.push('#sealed = :sealed');
      names['#sealed'] = SECRETS_ATTRIBUTE;
      values[':sealed'] = (await this.box(deadline)).seal(JSON.stringify(secrets), context(key));
    }
    let condition = 'attribute_exists(pk) AND #version = :expected';
    if (options.resetHealth) {
      // Enabling a disabled endpoint starts it afresh; only while it is still stored disabled.
      for (const attribute of ENDPOINT_HEALTH_ATTRIBUTES) {
        names[`#h_${attribute}`] = attribute;
        removes.push(`#h_${attribute}`);
      }
      condition += ' AND #status = :wasDisabled';
      values[':wasDisabled'] = 'disabled';
    }
    const command = new UpdateCommand({
      TableName: this.tableName,
      Key: key,
      UpdateExpression: `SET ${sets.join(', ')}${removes.length > 0 ? ` REMOVE ${removes.join(', ')}` : ''}`,
      ConditionExpression: condition,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
    try {
      await withRetries((options) => this.client.send(command, options), deadline, this.policy);
      return 'updated';
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return error.Item ? 'stale' : 'gone';
      throw error;
    }
  }

  async delete(mode: Mode, companyId: string, endpointId: string, deadline: Deadline = standaloneDeadline()): Promise<boolean> {
    const key = keys.webhookEndpoint(mode, companyId, endpointId);
    const command = new TransactWriteCommand({
      TransactItems: [
        { Delete: { TableName: this.tableName, Key: key, ConditionExpression: 'attribute_exists(pk)' } },
        {
          Update: {
            TableName: this.tableName,
            Key: keys.webhookEndpointCounter(mode, companyId),
            UpdateExpression: 'ADD endpointCount :minusOne',
            ConditionExpression: 'endpointCount > :zero',
            ExpressionAttributeValues: { ':minusOne': -1, ':zero': 0 },
          },
        },
      ],
      // One token per delete request (its retries share it): a token derived from the key would make a later delete
      // of the same id within 10 minutes a replay of the first, answered as a success.
      ClientRequestToken: randomUUID(),
    });
    try {
      await withRetries((options) => this.client.send(command, options), deadline, this.policy);
      return true;
    } catch (error) {
      const reasons = (error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons;
      if (isTransactionCancelled(error) && reasons?.[0]?.Code === 'ConditionalCheckFailed') return false;
      throw error;
    }
  }

  async recordHealth(
    mode: Mode,
    companyId: string,
    endpointId: string,
    health: EndpointHealth,
    disable?: { disabledReason: string },
  ): Promise<'recorded' | 'unchanged' | 'gone'> {
    const deadline = standaloneDeadline();
    const key = keys.webhookEndpoint(mode, companyId, endpointId);
    const failing = health.failingSince === undefined ? undefined : { ...health, failingSince: health.failingSince };
    // A failure is written by what the stored run is (failureRecord), with no read first: the first
    // guess is the caller's own reading (a new run, or one going on); a failed condition's old image
    // tells the stored run, and the next round writes for it. Each branch's condition is exactly
    // "the stored run is what this branch is for", so a round fails only when the run changed meanwhile.
    let record: ReturnType<typeof failureRecord> | undefined;
    if (failing) record = failing.lastFailureAt !== undefined && failing.lastFailureAt !== failing.failingSince ? 'continue' : 'start';
    for (let round = 1; ; round++) {
      const command = this.healthCommand(key, health, record, disable);
      if (!command) return 'recorded';
      try {
        await withRetries((options) => this.client.send(command, options), deadline, this.policy);
        return 'recorded';
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
        if (!error.Item) return 'gone';
        const stored = unmarshall(error.Item) as Partial<Record<'status' | 'failingSince' | 'lastFailureAt', string>>;
        if (disable && stored.status !== 'enabled') return 'unchanged';
        if (!failing || round >= HEALTH_ROUNDS) throw error;
        record = failureRecord(
          {
            status: stored.status === 'disabled' ? 'disabled' : 'enabled',
            ...(stored.failingSince !== undefined ? { failingSince: stored.failingSince } : {}),
            ...(stored.lastFailureAt !== undefined ? { lastFailureAt: stored.lastFailureAt } : {}),
          },
          failing,
        );
      }
    }
  }

  /** One health write: the run cleared (record undefined), started, continued or kept (plus the disable, if any). */
  private healthCommand(
    key: ItemKey,
    health: EndpointHealth,
    record: 'start' | 'continue' | 'keep' | undefined,
    disable?: { disabledReason: string },
  ): UpdateCommand | undefined {
    const names: Record<string, string> = { '#failingSince': 'failingSince', '#lastFailureAt': 'lastFailureAt' };
    const values: Record<string, unknown> = {};
    const sets: string[] = [];
    const conditions = ['attribute_exists(pk)'];
    // The stored run's last failure: its lastFailureAt, or its start for a run recorded without one.
    const lastFailure = (op: string, value: string) =>
      `(#lastFailureAt ${op} ${value} OR (attribute_not_exists(#lastFailureAt) AND #failingSince ${op} ${value}))`;
    if (health.failingSince !== undefined) {
      const failedAt = health.lastFailureAt ?? health.failingSince;
      values[':failedAt'] = failedAt;
      values[':aliveFrom'] = new Date(Date.parse(failedAt) - QUIET_GAP_MS).toISOString();
      if (record === 'start') {
        // No run stored, or one whose last failure is more than the quiet gap before this one: this failure starts a new run.
        conditions.push(`(attribute_not_exists(#failingSince) OR ${lastFailure('<', ':aliveFrom')})`);
        sets.push('#failingSince = :failingSince', '#lastFailureAt = :failedAt');
        values[':failingSince'] = health.failingSince;
      } else {
        conditions.push(`attribute_exists(#failingSince) AND ${lastFailure('>=', ':aliveFrom')}`);
        if (record === 'continue') {
          conditions.push(`NOT ${lastFailure('>=', ':failedAt')}`);
          sets.push('#lastFailureAt = :failedAt');
        } else {
          conditions.push(lastFailure('>=', ':failedAt'));
          if (!disable) return undefined;
        }
      }
    }
    if (disable) {
      sets.push('#status = :disabled', 'disabledReason = :reason', 'updatedAt = :now');
      names['#status'] = 'status';
      values[':disabled'] = 'disabled';
      values[':enabled'] = 'enabled';
      values[':reason'] = disable.disabledReason;
      values[':now'] = new Date().toISOString();
      values[':one'] = 1;
      conditions.push('#status = :enabled');
    }
    const update =
      (sets.length > 0 ? `SET ${sets.join(', ')}` : '') +
      (health.failingSince === undefined ? ' REMOVE #failingSince, #lastFailureAt' : '') +
      (disable ? ' ADD version :one' : '');
    return new UpdateCommand({
      TableName: this.tableName,
      Key: key,
      UpdateExpression: update.trim(),
      ConditionExpression: conditions.join(' AND '),
      ExpressionAttributeNames: names,
      ...(Object.keys(values).length > 0 ? { ExpressionAttributeValues: values } : {}),
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
  }

  private async read(key: ItemKey, deadline: Deadline): Promise<Record<string, unknown> | undefined> {
    const command = new GetCommand({ TableName: this.tableName, Key: key, ConsistentRead: true });
    return (await withRetries((options) => this.client.send(command, options), deadline, this.policy)).Item;
  }

  private async box(deadline: Deadline): Promise<SecretBox> {
    if (!this.secretBox) throw new Error('this function holds no webhook secret key');
    return this.secretBox(deadline);
  }

  private plainItem(endpoint: WebhookEndpoint): Record<string, unknown> {
    const key = keys.webhookEndpoint(endpoint.mode, endpoint.companyId, endpoint.endpointId);
    return { ...keys.withTestDataListing(endpoint.mode, endpoint.companyId, key), type: ITEM_TYPES.webhookEndpoint, ...endpoint };
  }

  private async item(endpoint: WebhookEndpoint, secrets: readonly EndpointSecret[], deadline: Deadline): Promise<Record<string, unknown>> {
    const key = keys.webhookEndpoint(endpoint.mode, endpoint.companyId, endpoint.endpointId);
    const box = await this.box(deadline);
    return { ...this.plainItem(endpoint), [SECRETS_ATTRIBUTE]: box.seal(JSON.stringify(secrets), context(key)) };
  }
}

/** The sealing context: the item's key, so a sealed value opens only where it was written. */
function context(key: ItemKey): string {
  return `${key.pk}\u0000${key.sk}`;
}

function endpointOf(item: Record<string, unknown>): WebhookEndpoint {
  const endpoint: WebhookEndpoint = {
    endpointId: item.endpointId as string,
    companyId: item.companyId as string,
    mode: storedMode(item.mode),
    url: item.url as string,
    events: item.events as WebhookEndpoint['events'],
    description: (item.description as string | undefined) ?? '',
    status: item.status as WebhookEndpoint['status'],
    createdAt: item.createdAt as string,
    updatedAt: item.updatedAt as string,
    version: item.version as number,
  };
  if (typeof item.disabledReason === 'string') endpoint.disabledReason = item.disabledReason;
  if (typeof item.failingSince === 'string') endpoint.failingSince = item.failingSince;
  if (typeof item.lastFailureAt === 'string') endpoint.lastFailureAt = item.lastFailureAt;
  return endpoint;
}
