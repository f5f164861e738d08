import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { keys } from '../../../lib/adapters/dynamodb/table-keys.js';
import { DynamoWebhookDeliveryReads } from '../../../lib/adapters/dynamodb/webhook-delivery-reads.js';
import type { DynamoWebhookDeliveryStore } from '../../../lib/adapters/dynamodb/webhook-delivery-store.js';
import { DynamoWebhookDeliverySlots } from '../../../lib/adapters/dynamodb/webhook-delivery-slots.js';
import type { DynamoWebhookEndpointStore } from '../../../lib/adapters/dynamodb/webhook-endpoint-store.js';
import { deliveryJobFor } from '../../../lib/webhooks/fan-out-event.js';

/**
 * The delivery engine's batch requests when DynamoDB processes only part of one (it may, under load):
 * the delivery function's joint read (webhook-delivery-reads.ts) and the waiting entries' writes
 * (webhook-delivery-slots.ts). The client is a script: the way to make DynamoDB shed part of a batch
 * on cue. Each answers every job, or writes every entry, exactly once over its rounds.
 */
const jobs = Array.from({ length: 30 }, (_, i) =>
  deliveryJobFor(
    {
      eventId: `evt_${String(i).padStart(22, '0')}`,
      eventType: 'case.created',
      companyId: 'co_1',
      mode: 'live',
      createdAt: `2026-11-29T10:00:${String(i).padStart(2, '0')}.000Z`,
    },
    { endpointId: `we_${i % 3}` },
  ),
);
const id = (key: { pk: unknown; sk: unknown }) => `${String(key.pk)}|${String(key.sk)}`;

describe('a batch request DynamoDB processes only in part', () => {
  it('the delivery function’s joint read asks again for the keys left unprocessed, and answers every job', async () => {
    const asked: string[][] = [];
    const client = {
      send: async (command: { input: { RequestItems: Record<string, { Keys: { pk: string; sk: string }[] }> } }) => {
        const wanted = command.input.RequestItems.t!.Keys;
        asked.push(wanted.map(id));
        // The first round leaves its last five keys unprocessed; every key is found when asked.
        const [answered, unprocessed] = asked.length === 1 ? [wanted.slice(0, -5), wanted.slice(-5)] : [wanted, []];
        return {
          Responses: { t: answered.map((key) => ({ ...key, payload: '{}', companyId: 'co_1', mode: 'live' })) },
          UnprocessedKeys: unprocessed.length > 0 ? { t: { Keys: unprocessed } } : {},
        };
      },
    } as unknown as DynamoDBDocumentClient;
    const stores = {
      endpoints: { withSecretsOf: async (item: Record<string, unknown>) => ({ endpoint: item, secrets: [] }) },
      deliveries: { recordOf: (item: Record<string, unknown> | undefined) => item },
    } as unknown as { endpoints: DynamoWebhookEndpointStore; deliveries: DynamoWebhookDeliveryStore };
    const reading = await new DynamoWebhookDeliveryReads(client, 't', stores).read(jobs);
    // 3 endpoints, 30 records, 30 events: 63 keys, in one request of 63 and one of the 5 left over.
    expect(asked.map((round) => round.length)).toEqual([63, 5]);
    expect(new Set(asked.flat()).size).toBe(63);
    for (const job of jobs) {
      expect(reading.endpoint(job.mode, job.companyId, job.endpointId)).toBeDefined();
      expect(reading.delivery(job)).toMatchObject(keys.webhookDelivery(job));
      expect(reading.event(job.mode, job.eventId)).toBeDefined();
    }
  });

  it('the waiting entries’ writes send again the items left unprocessed, and only those', async () => {
    const applied: string[] = [];
    let rounds = 0;
    const client = {
      send: async (command: {
        constructor: { name: string };
        input: { RequestItems: Record<string, { PutRequest: { Item: { pk: string; sk: string } } }[]> };
      }) => {
        expect(command.constructor.name).toBe('BatchWriteCommand');
        const writes = command.input.RequestItems.t!;
        // The first request leaves its last three unprocessed.
        const unprocessed = rounds++ === 0 ? writes.slice(-3) : [];
        for (const write of writes.slice(0, writes.length - unprocessed.length)) applied.push(id(write.PutRequest.Item));
        return { UnprocessedItems: unprocessed.length > 0 ? { t: unprocessed } : {} };
      },
    } as unknown as DynamoDBDocumentClient;
    await new DynamoWebhookDeliverySlots(client, 't').wait(jobs);
    expect(applied).toHaveLength(30);
    expect(new Set(applied)).toEqual(new Set(jobs.map((job) => id(keys.webhookDeliveryWaiting(job)))));
  });
});
