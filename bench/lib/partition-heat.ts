import { plainInput } from '../../test/support/plain-items.js';
import type { StorageCall } from '../../test/support/storage-rig/recorder.js';

/**
 * Partition heat, estimated from the storage calls a request makes (recorded by the storage rig):
 * the capacity units each DynamoDB call consumes, on the partition key (and, for a case, the gsi2
 * index partition) it lands on, by DynamoDB's documented rules: a write is 1 WCU per KB of item
 * (2 inside a transaction), a read 1 RCU per 4 KB strongly consistent, half that eventually
 * consistent. Item sizes are the JSON length of the item as written (close to DynamoDB's count of
 * attribute names plus values for these flat items); a read is counted as one item of at most 4 KB,
 * which every item the create path reads is. A partition takes 1,000 WCU/s and 3,000 RCU/s.
 */
export interface Load {
  wcu: number;
  rcu: number;
}

export interface RequestLoad {
  company: string;
  /** Partition → units this request consumed there. */
  partitions: Map<string, Load>;
  /** `pk|sk` of every item the request wrote. */
  itemsWritten: Set<string>;
}

type Item = Record<string, unknown>;
const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value ?? {}));
const writeUnits = (item: unknown, transactional: boolean) => Math.max(1, Math.ceil(bytes(item) / 1024)) * (transactional ? 2 : 1);

export function requestLoad(company: string, calls: readonly StorageCall[]): RequestLoad {
  const partitions = new Map<string, Load>();
  const itemsWritten = new Set<string>();
  const add = (pk: unknown, load: Partial<Load>) => {
    const key = String(pk);
    const now = partitions.get(key) ?? { wcu: 0, rcu: 0 };
    partitions.set(key, { wcu: now.wcu + (load.wcu ?? 0), rcu: now.rcu + (load.rcu ?? 0) });
  };
  const write = (key: Item, item: unknown, transactional: boolean) => {
    const units = writeUnits(item, transactional);
    add(key.pk, { wcu: units });
    itemsWritten.add(`${String(key.pk)}|${String(key.sk)}`);
    // A case also lands on its company's list shard in gsi2 (index writes are not transactional).
    const gsi2pk = (item as Item).gsi2pk;
    if (typeof gsi2pk === 'string') add(`gsi2:${gsi2pk}`, { wcu: writeUnits(item, false) });
  };
  for (const call of calls) {
    if (call.service !== 'dynamodb' || !call.input) continue;
    const input = plainInput(call.input);
    const readUnits = input.ConsistentRead === true ? 1 : 0.5;
    switch (call.command) {
      case 'GetItem':
        add((input.Key as Item).pk, { rcu: readUnits });
        break;
      case 'BatchGetItem':
        for (const { Keys, ConsistentRead } of Object.values(
          input.RequestItems as Record<string, { Keys: Item[]; ConsistentRead?: boolean }>,
        )) {
          for (const key of Keys) add(key.pk, { rcu: ConsistentRead === true ? 1 : 0.5 });
        }
        break;
      case 'PutItem':
        write(input.Item as Item, input.Item, false);
        break;
      case 'UpdateItem':
        write(input.Key as Item, { ...(input.Key as Item), ...(input.ExpressionAttributeValues as Item) }, false);
        break;
      case 'DeleteItem':
        write(input.Key as Item, input.Key, false);
        break;
      case 'TransactWriteItems':
        for (const entry of input.TransactItems as { Put?: { Item: Item } }[]) if (entry.Put) write(entry.Put.Item, entry.Put.Item, true);
        break;
    }
  }
  return { company, partitions, itemsWritten };
}

export interface HeatScenario {
  name: string;
  /** Requests of 100 cases a second, in all. */
  requestsPerSecond: number;
  /** Over how many companies they are spread evenly. */
  companies: number;
}

export interface HotKey {
  partition: string;
  wcu: number;
  rcu: number;
}

/**
 * The load per partition in one second of a scenario, from recorded requests of at least two
 * companies. A partition the recorded requests of several companies touch is service-wide (all
 * requests of the second reach it, at the recorded average); one touched by several requests of
 * one company is that company's (its share of the requests, at least one request's worth); one
 * touched by a single request is that request's alone (an invoiceRef guard, a case, a claim).
 */
export function heat(recorded: readonly RequestLoad[], scenario: HeatScenario): HotKey[] {
  const byPartition = new Map<string, { loads: Load[]; companies: Set<string> }>();
  for (const request of recorded) {
    for (const [partition, load] of request.partitions) {
      const entry = byPartition.get(partition) ?? { loads: [], companies: new Set<string>() };
      entry.loads.push(load);
      entry.companies.add(request.company);
      byPartition.set(partition, entry);
    }
  }
  const perCompany = scenario.requestsPerSecond / scenario.companies;
  const requestsOf = (company: string) => recorded.filter((r) => r.company === company).length;
  const out: HotKey[] = [];
  for (const [partition, { loads, companies }] of byPartition) {
    const sum = loads.reduce((a, l) => ({ wcu: a.wcu + l.wcu, rcu: a.rcu + l.rcu }), { wcu: 0, rcu: 0 });
    const max = loads.reduce((a, l) => ({ wcu: Math.max(a.wcu, l.wcu), rcu: Math.max(a.rcu, l.rcu) }), { wcu: 0, rcu: 0 });
    let rate: { wcu: number; rcu: number };
    if (companies.size > 1) {
      rate = {
        wcu: (sum.wcu / recorded.length) * scenario.requestsPerSecond,
        rcu: (sum.rcu / recorded.length) * scenario.requestsPerSecond,
      };
    } else if (loads.length > 1) {
      const n = requestsOf([...companies][0]!);
      rate = { wcu: Math.max(max.wcu, (sum.wcu / n) * perCompany), rcu: Math.max(max.rcu, (sum.rcu / n) * perCompany) };
    } else {
      rate = max;
    }
    out.push({ partition, wcu: rate.wcu, rcu: rate.rcu });
  }
  return out.sort((a, b) => Math.max(b.wcu / 1000, b.rcu / 3000) - Math.max(a.wcu / 1000, a.rcu / 3000));
}

/** Items every recorded request wrote: each would take the writes of the whole service. */
export function itemsWrittenByEveryRequest(recorded: readonly RequestLoad[]): string[] {
  if (recorded.length === 0) return [];
  return [...recorded[0]!.itemsWritten].filter((item) => recorded.every((r) => r.itemsWritten.has(item)));
}
