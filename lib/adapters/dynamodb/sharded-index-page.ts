import { QueryCommand, type DynamoDBDocumentClient, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import type { ListPosition } from '../../cases/ports.js';
import type { Deadline } from '../../deadline.js';
import { withRetries } from '../retry.js';
import { TABLE_DEFINITION } from './table-keys.js';

/**
 * A page of a list kept in gsi2 over several shards (index partitions) of one company: the case
 * list and the event list (table-keys.ts). Every shard named is queried in parallel, newest first,
 * and the answers are merged in gsi2sk order. Without a filter one round of queries fills the page
 * (each shard is asked for `limit + 1` items, so at least one shard runs past the page and proves
 * whether a next page exists): one round trip.
 *
 * A filter is a FilterExpression: DynamoDB reads (and bills) the items of the sort-key range and
 * returns the matching ones, so a selective filter can take further rounds, each continuing every
 * shard that is not exhausted, until the page is full or the shards are exhausted. Rounds grow
 * their read size and stop at MAX_ROUNDS; a page cut short there is shorter than `limit` but still
 * carries a position, and no item is skipped or repeated.
 *
 * The position is the gsi2sk below which the walk continues: the same for every shard, because
 * the merged order is the order of gsi2sk. A shard with nothing below it is named in `doneShards`
 * and not queried again.
 */
export const MAX_ROUNDS = 6;
/** DynamoDB's own cap on a query page is 1 MB; this caps the items asked for per query. */
const MAX_QUERY_LIMIT = 1000;

export type Item = Record<string, unknown>;

export interface ShardedPageRequest {
  client: DynamoDBDocumentClient;
  tableName: string;
  /** The shards to read (all of a company's, or the one a filter confines the list to). */
  shards: readonly number[];
  /** The gsi2pk of a shard. */
  partitionOf: (shard: number) => string;
  /** Inclusive gsi2sk bound (an instant is a prefix of its own items' keys). */
  lower?: string;
  /** Exclusive gsi2sk bound. */
  before?: string;
  /** A FilterExpression over the items' attributes, with the names and values it uses. */
  filter?: { expression: string; names: Record<string, string>; values: Record<string, unknown> };
  /** 1 to 100. */
  limit: number;
  position?: ListPosition;
}

interface ShardState {
  shard: number;
  matched: { sk: string; item: Item }[];
  startKey: Item | undefined;
  exhausted: boolean;
  /** gsi2sk of the last item the shard's queries evaluated (matched or not). */
  frontier: string | undefined;
}

export async function pageShardedIndex(
  request: ShardedPageRequest,
  deadline?: Deadline,
): Promise<{ items: Item[]; next: ListPosition | null }> {
  const { client, tableName, partitionOf, lower, filter, limit, position } = request;
  const { partitionKey, sortKey, name: indexName } = TABLE_DEFINITION.gsi2;
  const upper = [request.before, position?.after].filter((b): b is string => b !== undefined).sort()[0];
  if (lower !== undefined && upper !== undefined && lower >= upper) return { items: [], next: null };
  // Every upper bound is exclusive. With a lower bound too the key condition is BETWEEN, which
  // includes its upper end: that can only be the cursor's own item, dropped below.
  const boundaryItem = lower !== undefined && upper !== undefined ? upper : undefined;

  // DynamoDB refuses a name or value an expression does not use: add each with its condition.
  const names: Record<string, string> = { '#pk': partitionKey, ...filter?.names };
  if (lower !== undefined || upper !== undefined) names['#sk'] = sortKey;
  const values: Record<string, unknown> = { ...filter?.values };
  let keyCondition = '#pk = :pk';
  if (lower !== undefined && upper !== undefined) {
    keyCondition += ' AND #sk BETWEEN :lower AND :upper';
    Object.assign(values, { ':lower': lower, ':upper': upper });
  } else if (upper !== undefined) {
    keyCondition += ' AND #sk < :upper';
    values[':upper'] = upper;
  } else if (lower !== undefined) {
    keyCondition += ' AND #sk >= :lower';
    values[':lower'] = lower;
  }

  const done = new Set(position?.doneShards ?? []);
  const shards: ShardState[] = request.shards
    .filter((shard) => !done.has(shard))
    .map((shard) => ({ shard, matched: [], startKey: undefined, exhausted: false, frontier: undefined }));

  const query = async (state: ShardState, round: number) => {
    const input: QueryCommandInput = {
      TableName: tableName,
      IndexName: indexName,
      KeyConditionExpression: keyCondition,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: { ...values, ':pk': partitionOf(state.shard) },
      ScanIndexForward: false,
      // One more than the page (two when the boundary item may come back) proves whether there is a next page.
      Limit: Math.min(MAX_QUERY_LIMIT, (limit + (boundaryItem === undefined ? 1 : 2)) * 4 ** (round - 1)),
      ...(filter ? { FilterExpression: filter.expression } : {}),
      ...(state.startKey ? { ExclusiveStartKey: state.startKey } : {}),
    };
    const command = new QueryCommand(input);
    const out = await withRetries((options) => client.send(command, options), deadline);
    for (const item of out.Items ?? []) {
      const sk = item[sortKey] as string;
      if (sk !== boundaryItem) state.matched.push({ sk, item });
    }
    state.startKey = out.LastEvaluatedKey;
    state.exhausted = out.LastEvaluatedKey === undefined;
    state.frontier = out.LastEvaluatedKey?.[sortKey] as string | undefined;
  };

  /** Shards with nothing below `after`: done before, or exhausted now with every match at or above it. */
  const doneShards = (after: string): number[] => {
    const now = shards.filter((s) => s.exhausted && s.matched.every((m) => m.sk >= after)).map((s) => s.shard);
    return [...done, ...now].sort((a, b) => a - b);
  };

  for (let round = 1; ; round++) {
    await Promise.all(shards.filter((s) => !s.exhausted).map((s) => query(s, round)));
    // Every item at or above the highest frontier of a shard still running has been seen in
    // every shard: those are final. Below it, a running shard may still hold newer items.
    const frontiers = shards.filter((s) => !s.exhausted).map((s) => s.frontier as string);
    const settled = frontiers.length === 0 ? undefined : frontiers.sort().at(-1);
    const ready = shards
      .flatMap((s) => s.matched)
      .filter((m) => settled === undefined || m.sk >= settled)
      .sort((a, b) => (a.sk < b.sk ? 1 : a.sk > b.sk ? -1 : 0));

    if (ready.length > limit) {
      const emitted = ready.slice(0, limit);
      const after = emitted[emitted.length - 1]!.sk;
      return { items: emitted.map((m) => m.item), next: { after, doneShards: doneShards(after) } };
    }
    if (settled === undefined) return { items: ready.map((m) => m.item), next: null };
    if (round >= MAX_ROUNDS) return { items: ready.map((m) => m.item), next: { after: settled, doneShards: doneShards(settled) } };
  }
}
