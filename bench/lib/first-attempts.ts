import type { ReceivedDelivery, SignedWebhookReceiver } from '../../infra/local/signed-webhook-receiver.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The first attempt per event at a receiver, waiting up to `ms` for all of them (polled every 50 ms). */
export async function firstAttempts(receiver: SignedWebhookReceiver, eventIds: Set<string>, ms: number): Promise<ReceivedDelivery[]> {
  const end = Date.now() + ms;
  for (;;) {
    const first = new Map<string, ReceivedDelivery>();
    for (const d of receiver.received) if (eventIds.has(d.webhookId) && !first.has(d.webhookId)) first.set(d.webhookId, d);
    if (first.size === eventIds.size || Date.now() > end) return [...first.values()];
    await sleep(50);
  }
}
