import { BatchGetCommand, QueryCommand, type DynamoDBDocumentClient, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import type { StoredCase } from '../../cases/case-record.js';
import type { CaseLister, CasePage, CasePageRequest } from '../../cases/ports.js';
import type { Deadline } from '../../deadline.js';
import type { Mode } from '../../mode.js';
import { withRetries, withUnprocessedRetries } from '../retry.js';
import { caseFromItem } from './case-reader.js';
import { CASE_LIST_SHARDS, keys, TABLE_DEFINITION } from './table-keys.js';

/**
 * A page of a company's cases from gsi2: every shard of the company is queried in parallel,
 * newest first, and the answers are merged. Without a status or recoveryGate filter one round of
 * queries fills the page (each shard is asked for `limit + 1` cases, so at least one shard runs
 * past the page and proves whether a next page exists): one round trip after the API key.
 *
 * status and recoveryGate are FilterExpressions: DynamoDB reads (and bills) the cases of the date
 * range and returns the matching ones, so a selective filter can take further rounds, each
 * continuing every shard that is not exhausted, until the page is full or the shards are
 * exhausted. Rounds grow their read size and stop at MAX_ROUNDS; a page cut short there is
 * shorter than `limit` but still carries a cursor, and no case is skipped or repeated.
 *
 * The position in the cursor is the gsi2sk below which the walk continues: the same for every
 * shard, because the merged order is the order of gsi2sk. A shard with nothing below it is
 * named in `doneShards` and not queried again.
 */
export const MAX_ROUNDS = 6;
/** BatchGetItem takes at most 100 keys a call. */
const MAX_BATCH_GET_KEYS = 100;
/** DynamoDB's own cap on a query page is 1 MB; this caps the items asked for per query. */
const MAX_QUERY_LIMIT = 1000;

type Item = Record<string, unknown>;

interface ShardState {
  shard: number;
  matched: { sk: string; item: Item }[];
  startKey: Item | undefined;
  exhausted: boolean;
  /** gsi2sk of the last case the shard's queries evaluated (matched or not). */
  frontier: string | undefined;
}

export class DynamoCaseLister implements CaseLister {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  /**
   * One consistent Query of the invoiceRef's partition (its GUARD, naming the case that holds it,
   * and a `WITHDRAWN#` item per case that gave it up; table-keys.ts), then one consistent
   * BatchGetItem of those cases (keys left unprocessed are asked again: retry.ts). A partition
   * holds one item per case that ever had the invoiceRef, so the Query is one page in practice;
   * further pages are followed all the same.
   */
  async findByInvoiceRef(mode: Mode, companyId: string, invoiceRefKey: string, deadline?: Deadline): Promise<StoredCase[]> {
    const caseIds = new Set<string>();
    let startKey: Record<string, unknown> | undefined;
    do {
      const command = new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: '#pk = :pk',
        ExpressionAttributeNames: { '#pk': TABLE_DEFINITION.partitionKey },
        ExpressionAttributeValues: { ':pk': keys.invoiceRefGuard(mode, companyId, invoiceRefKey).pk },
        ConsistentRead: true,
        ...(startKey ? { ExclusiveStartKey: startKey } : {}),
      });
      const out = await withRetries((options) => this.client.send(command, options), deadline);
      for (const item of out.Items ?? []) if (typeof item.caseId === 'string') caseIds.add(item.caseId);
      startKey = out.LastEvaluatedKey;
    } while (startKey);

    const found: StoredCase[] = [];
    const ids = [...caseIds];
    type CaseKey = ReturnType<typeof keys.case>;
    for (let i = 0; i < ids.length; i += MAX_BATCH_GET_KEYS) {
      await withUnprocessedRetries<CaseKey>(
        ids.slice(i, i + MAX_BATCH_GET_KEYS).map((id) => keys.case(mode, id)),
        async (wanted, options) => {
          const read = new BatchGetCommand({ RequestItems: { [this.tableName]: { Keys: [...wanted], ConsistentRead: true } } });
          const out = await this.client.send(read, options);
          for (const item of out.Responses?.[this.tableName] ?? []) found.push(caseFromItem(item));
          return (out.UnprocessedKeys?.[this.tableName]?.Keys ?? []) as CaseKey[];
        },
        deadline,
      );
    }
    // Newest first, in the list's order (its gsi2sk, compared as DynamoDB compares strings: by code unit).
    const position = (c: StoredCase) => keys.caseListPosition(c.createdAt, c.caseId);
    return found
      .filter((stored) => stored.companyId === companyId)
      .sort((a, b) => (position(a) < position(b) ? 1 : position(a) > position(b) ? -1 : 0));
  }

  async page(request: CasePageRequest, deadline?: Deadline): Promise<CasePage> {
    const { mode, companyId, filters, limit, position } = request;
    const { partitionKey, sortKey, name: indexName } = TABLE_DEFINITION.gsi2;
    const lower = filters.createdFrom === undefined ? undefined : keys.caseListBound(filters.createdFrom);
    const before = filters.createdBefore === undefined ? undefined : keys.caseListBound(filters.createdBefore);
    const upper = [before, position?.after].filter((b): b is string => b !== undefined).sort()[0];
    if (lower !== undefined && upper !== undefined && lower >= upper) return { cases: [], next: null };
    // Every upper bound is exclusive. With a lower bound too the key condition is BETWEEN, which
    // includes its upper end: that can only be the cursor's own case, dropped below.
    const boundaryCase = lower !== undefined && upper !== undefined ? upper : undefined;

    // DynamoDB refuses a name or value an expression does not use: add each with its condition.
    const names: Record<string, string> = { '#pk': partitionKey };
    if (lower !== undefined || upper !== undefined) names['#sk'] = sortKey;
    const values: Record<string, unknown> = {};
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
    const conditions: string[] = [];
    if (filters.status !== undefined) {
      names['#status'] = 'status';
      values[':status'] = filters.status;
      conditions.push('#status = :status');
    }
    if (filters.recoveryGate !== undefined) {
      names['#gate'] = 'recoveryGate';
      values[':gate'] = filters.recoveryGate;
      conditions.push('#gate = :gate');
    }

    const done = new Set(position?.doneShards ?? []);
    const shards: ShardState[] = [];
    for (let shard = 0; shard < CASE_LIST_SHARDS; shard++) {
      if (!done.has(shard)) shards.push({ shard, matched: [], startKey: undefined, exhausted: false, frontier: undefined });
    }

    const query = async (state: ShardState, round: number) => {
      const input: QueryCommandInput = {
        TableName: this.tableName,
        IndexName: indexName,
        KeyConditionExpression: keyCondition,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: { ...values, ':pk': keys.caseListPartition(mode, companyId, state.shard) },
        ScanIndexForward: false,
        // One more than the page (two when the boundary case may come back) proves whether there is a next page.
        Limit: Math.min(MAX_QUERY_LIMIT, (limit + (boundaryCase === undefined ? 1 : 2)) * 4 ** (round - 1)),
        ...(conditions.length > 0 ? { FilterExpression: conditions.join(' AND ') } : {}),
        ...(state.startKey ? { ExclusiveStartKey: state.startKey } : {}),
      };
      const command = new QueryCommand(input);
      const out = await withRetries((options) => this.client.send(command, options), deadline);
      for (const item of out.Items ?? []) {
        const sk = item[sortKey] as string;
        if (sk !== boundaryCase) state.matched.push({ sk, item });
      }
      state.startKey = out.LastEvaluatedKey;
      state.exhausted = out.LastEvaluatedKey === undefined;
      state.frontier = out.LastEvaluatedKey?.[sortKey] as string | undefined;
    };

    for (let round = 1; ; round++) {
      await Promise.all(shards.filter((s) => !s.exhausted).map((s) => query(s, round)));
      // Every case at or above the highest frontier of a shard still running has been seen in
      // every shard: those are final. Below it, a running shard may still hold newer cases.
      const frontiers = shards.filter((s) => !s.exhausted).map((s) => s.frontier as string);
      const settled = frontiers.length === 0 ? undefined : frontiers.sort().at(-1);
      const ready = shards
        .flatMap((s) => s.matched.map((m) => ({ ...m, shard: s.shard })))
        .filter((m) => settled === undefined || m.sk >= settled)
        .sort((a, b) => (a.sk < b.sk ? 1 : a.sk > b.sk ? -1 : 0));

      if (ready.length > limit) {
        const emitted = ready.slice(0, limit);
        const after = emitted[emitted.length - 1]!.sk;
        return { cases: emitted.map((m) => caseFromItem(m.item)), next: { after, doneShards: this.doneShards(done, shards, after) } };
      }
      if (settled === undefined) return { cases: ready.map((m) => caseFromItem(m.item)), next: null };
      if (round >= MAX_ROUNDS) {
        return {
          cases: ready.map((m) => caseFromItem(m.item)),
          next: { after: settled, doneShards: this.doneShards(done, shards, settled) },
        };
      }
    }
  }

  /** Shards with nothing below `after`: done before, or exhausted now with every match at or above it. */
  private doneShards(done: ReadonlySet<number>, shards: ShardState[], after: string): number[] {
    const now = shards.filter((s) => s.exhausted && s.matched.every((m) => m.sk >= after)).map((s) => s.shard);
    return [...done, ...now].sort((a, b) => a - b);
  }
}
