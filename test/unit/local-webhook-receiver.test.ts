import { describeDelivery, startSignedWebhookReceiver, type SignedWebhookReceiver } from '../../infra/local/signed-webhook-receiver.js';
import { generateEndpointSecret, signatureHeaders } from '../../lib/webhooks/signature.js';

/** The developers' receiver (npm run webhook-receiver): what it tells about a delivery, and how it answers. */
describe('the local webhook receiver', () => {
  const secret = generateEndpointSecret();
  const rotated = generateEndpointSecret();
  let receiver: SignedWebhookReceiver;
  beforeAll(async () => {
    receiver = await startSignedWebhookReceiver({ secrets: [secret] });
  });
  afterAll(() => receiver.close());

  const event = { id: 'evt_1', type: 'case.created', createdAt: new Date(Date.now() - 250).toISOString(), data: {} };
  const post = (body: string, headers: Record<string, string>) =>
    fetch(`${receiver.url}/`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body });

  test('a delivery signed with its secret (even beside a rotated one) is verified, answered 204 and printed with its webhook-id', async () => {
    const body = JSON.stringify(event);
    const res = await post(body, { ...signatureHeaders('evt_1', body, new Date(), [rotated, secret]) });
    expect(res.status).toBe(204);
    const d = receiver.received.at(-1)!;
    expect(d).toMatchObject({ webhookId: 'evt_1', eventType: 'case.created', verified: true });
    expect(describeDelivery(d)).toMatch(/evt_1 {2}case\.created {2}signature verified \d+ ms after the event$/);
  });

  test('a delivery signed with another secret, or with its body changed, is not verified and answered 400', async () => {
    const body = JSON.stringify(event);
    expect((await post(body, { ...signatureHeaders('evt_1', body, new Date(), [rotated]) })).status).toBe(400);
    expect(receiver.received.at(-1)!.verified).toBe(false);
    const headers = signatureHeaders('evt_1', body, new Date(), [secret]);
    expect((await post(body.replace('case.created', 'case.updated'), { ...headers })).status).toBe(400);
    expect(describeDelivery(receiver.received.at(-1)!)).toContain('signature NOT verified');
  });

  test('a receiver told how to answer each delivery fails the first attempt of an event and accepts the next one', async () => {
    const failed = new Set<string>();
    const flaky = await startSignedWebhookReceiver({
      secrets: [secret],
      status: (d) => (failed.has(d.webhookId) ? 204 : (failed.add(d.webhookId), 503)),
    });
    try {
      const body = JSON.stringify(event);
      const send = () =>
        fetch(`${flaky.url}/`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', ...signatureHeaders('evt_1', body, new Date(), [secret]) },
          body,
        });
      expect((await send()).status).toBe(503);
      expect((await send()).status).toBe(204);
      expect(flaky.received.map((d) => [d.webhookId, d.verified])).toEqual([
        ['evt_1', true],
        ['evt_1', true],
      ]);
    } finally {
      await flaky.close();
    }
  });
});
