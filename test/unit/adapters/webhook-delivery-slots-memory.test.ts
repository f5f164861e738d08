import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ITEM_TYPES, keys } from '../../../lib/adapters/dynamodb/table-keys.js';
import { DynamoWebhookDeliverySlots, KNOWN_ENDPOINTS_PER_MODE } from '../../../lib/adapters/dynamodb/webhook-delivery-slots.js';
import type { Mode } from '../../../lib/mode.js';
import { deliveryJobFor } from '../../../lib/webhooks/fan-out-event.js';
import { deliveryKeyOf, type DeliveryJob, type DeliveryKey } from '../../../lib/webhooks/webhook-delivery.js';

/**
 * What the slots adapter remembers of each endpoint's waiting list between fills (knownWaiting): a
 * fill that hands on an ended job's slot claims the jobs an earlier read saw without reading the list again. The table
 * is a stand-in here (every endpoint has `WAITING` jobs waiting and free slots; every claim succeeds):
 * what is counted is the adapter's own reads, one Query per list read.
 */
const CAP = 8;
const WAITING = 20;

function jobsOf(mode: Mode, endpointId: string): DeliveryJob[] {
  return Array.from({ length: WAITING }, (_, i) =>
    deliveryJobFor(
      {
        eventId: `evt_${endpointId}_${String(i).padStart(3, '0')}`,
        eventType: 'case.created',
        companyId: 'co_1',
        mode,
        createdAt: `2026-11-29T03:00:${String(i).padStart(2, '0')}.000Z`,
      },
      { endpointId },
    ),
  );
}

/** The first job claimed, ended: its slot handed on. */
function endedOne(mode: Mode, endpointId: string): DeliveryKey[] {
  return [deliveryKeyOf(jobsOf(mode, endpointId)[0]!)];
}

function standIn() {
  const reads: string[] = [];
  const updates: Record<string, unknown>[] = [];
  const client = {
    send: async (command: { constructor: { name: string }; input: Record<string, unknown> }) => {
      if (command.constructor.name === 'UpdateCommand') updates.push(command.input);
      if (command.constructor.name === 'QueryCommand') {
        const pk = (command.input.ExpressionAttributeValues as Record<string, string>)[':pk']!;
        reads.push(pk);
        const mode: Mode = pk.startsWith(keys.webhookDeliverySlotPartition('test', '')) ? 'test' : 'live';
        const endpointId = pk.slice(keys.webhookDeliverySlotPartition(mode, '').length);
        return {
          Items: [
            { type: ITEM_TYPES.webhookDeliverySlots },
            ...jobsOf(mode, endpointId).map((job) => ({ type: ITEM_TYPES.webhookDeliveryWaiting, job })),
          ],
        };
      }
      return {};
    },
  };
  return { slots: new DynamoWebhookDeliverySlots(client as unknown as DynamoDBDocumentClient, 't'), reads, updates };
}

/** Fills the endpoint as after a fan-out (a read, the cap claimed, the rest remembered). */
async function firstFill(slots: DynamoWebhookDeliverySlots, mode: Mode, endpointId: string) {
  expect(await slots.claimWaiting(mode, endpointId, CAP)).toHaveLength(CAP);
}

describe('what the slots adapter remembers of waiting lists between fills', () => {
  it('a fill that hands on the slot of an ended job takes the next waiting job an earlier read saw, without reading the list again', async () => {
    const { slots, reads } = standIn();
    await firstFill(slots, 'live', 'we_victim');
    expect(reads).toHaveLength(1);
    const [next] = await slots.claimWaiting('live', 'we_victim', CAP, [], endedOne('live', 'we_victim'));
    expect(next).toEqual(jobsOf('live', 'we_victim')[CAP]);
    expect(reads).toHaveLength(1);
  });

  it('a test-mode tenant with more endpoints than the memory holds never makes a live endpoint read its list again', async () => {
    const { slots, reads } = standIn();
    await firstFill(slots, 'live', 'we_victim');
    for (let i = 0; i <= KNOWN_ENDPOINTS_PER_MODE; i++) await firstFill(slots, 'test', `we_hostile${i}`);
    const before = reads.length;
    await slots.claimWaiting('live', 'we_victim', CAP, [], endedOne('live', 'we_victim'));
    expect(reads.length).toBe(before);
  });

  it('past the bound, only the endpoint used least recently is forgotten, never every endpoint at once', async () => {
    const { slots, reads } = standIn();
    await firstFill(slots, 'live', 'we_victim');
    for (let i = 0; i < KNOWN_ENDPOINTS_PER_MODE - 1; i++) await firstFill(slots, 'live', `we_other${i}`);
    // The victim used again: now the most recently used.
    await slots.claimWaiting('live', 'we_victim', CAP, [], endedOne('live', 'we_victim'));
    // One more endpoint than the memory holds: the least recently used (we_other0) is forgotten, not the victim.
    await firstFill(slots, 'live', 'we_newcomer');
    const before = reads.length;
    await slots.claimWaiting('live', 'we_victim', CAP, [], endedOne('live', 'we_victim'));
    expect(reads.length).toBe(before);
    await slots.claimWaiting('live', 'we_other1', CAP, [], endedOne('live', 'we_other1'));
    expect(reads.length).toBe(before);
    await slots.claimWaiting('live', 'we_other0', CAP, [], endedOne('live', 'we_other0'));
    expect(reads.length).toBe(before + 1);
  });

  it('a job this process remembers as waiting but that ended here (another process claimed it) is never claimed in its own hand-over', async () => {
    const { slots, updates } = standIn();
    await firstFill(slots, 'live', 'we_victim');
    // The next remembered job (the ninth) was claimed elsewhere meanwhile and has just ended in this process.
    const stale = deliveryKeyOf(jobsOf('live', 'we_victim')[CAP]!);
    updates.length = 0;
    const [next] = await slots.claimWaiting('live', 'we_victim', CAP, [], [stale]);
    expect(next).toEqual(jobsOf('live', 'we_victim')[CAP + 1]);
    // One write naming the ended holder and the next job's, never one attribute both set and removed (DynamoDB refuses that).
    for (const update of updates) {
      const names = update.ExpressionAttributeNames as Record<string, string>;
      const set = Object.entries(names)
        .filter(([k]) => k.startsWith('#c'))
        .map(([, v]) => v);
      const removed = Object.entries(names)
        .filter(([k]) => k.startsWith('#r'))
        .map(([, v]) => v);
      expect(set.filter((name) => removed.includes(name))).toEqual([]);
    }
  });
});
