import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/**
 * A webhook receiver for developers (`npm run webhook-receiver`, webhook-receiver-cli.ts):
 * listens on loopback, verifies each delivery's Standard Webhooks signature with the
 * `standardwebhooks` library as a partner would (any of the secrets given: during a rotation both
 * sign), prints one line per delivery (its webhook-id, the event, whether the signature verified, how
 * long after the event's createdAt it arrived) and answers 204, or 400 when the signature does not
 * verify (so the delivery log shows it as a failed attempt). `--status 503` answers that status to
 * every delivery instead, to watch the retries.
 *
 * `npm start` prints how to point an endpoint at it; the bench (bench/webhooks.ts) measures
 * deliveries with it.
 */
export interface ReceivedDelivery {
  /** Date.now() when the request's body had arrived. */
  receivedAt: number;
  webhookId: string;
  /** The event's type and createdAt, when the body is an event. */
  eventType?: string;
  eventCreatedAt?: string;
  verified: boolean;
  /** Why the signature did not verify. */
  error?: string;
  body: string;
}

export interface SignedWebhookReceiverOptions {
  /**
   * The endpoint's secrets (`whsec_…`); a delivery verifies when one of them verifies it. Read at
   * each delivery, so a caller may add the secret once the endpoint pointing here exists.
   */
  secrets: readonly string[];
  /** 0 or absent: a free port. */
  port?: number;
  host?: string;
  /** Answer every delivery with this status instead (a failing receiver), or with the status this gives for each one. */
  status?: number | ((delivery: ReceivedDelivery) => number);
  onDelivery?: (delivery: ReceivedDelivery) => void;
}

export interface SignedWebhookReceiver {
  url: string;
  port: number;
  received: ReceivedDelivery[];
  close(): Promise<void>;
}

export async function startSignedWebhookReceiver(options: SignedWebhookReceiverOptions): Promise<SignedWebhookReceiver> {
  const received: ReceivedDelivery[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const receivedAt = Date.now();
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = {
        'webhook-id': String(req.headers['webhook-id'] ?? ''),
        'webhook-timestamp': String(req.headers['webhook-timestamp'] ?? ''),
        'webhook-signature': String(req.headers['webhook-signature'] ?? ''),
      };
      let verified = false;
      let error: string | undefined;
      for (const verifier of options.secrets.map((secret) => new Webhook(secret))) {
        try {
          verifier.verify(body, headers);
          verified = true;
          break;
        } catch (e) {
          error = (e as Error).message;
        }
      }
      let event: { type?: unknown; createdAt?: unknown } = {};
      try {
        event = JSON.parse(body) as typeof event;
      } catch {
        // Not JSON: printed as it came.
      }
      const delivery: ReceivedDelivery = {
        receivedAt,
        webhookId: headers['webhook-id'],
        ...(typeof event.type === 'string' ? { eventType: event.type } : {}),
        ...(typeof event.createdAt === 'string' ? { eventCreatedAt: event.createdAt } : {}),
        verified,
        ...(verified ? {} : { error: error ?? 'no secret given' }),
        body,
      };
      received.push(delivery);
      options.onDelivery?.(delivery);
      const status = typeof options.status === 'function' ? options.status(delivery) : options.status;
      res.writeHead(status ?? (verified ? 204 : 400)).end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${options.host ?? '127.0.0.1'}:${port}`,
    port,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** One printed line per delivery. */
export function describeDelivery(d: ReceivedDelivery): string {
  const after = d.eventCreatedAt ? ` ${d.receivedAt - Date.parse(d.eventCreatedAt)} ms after the event` : '';
  const signature = d.verified ? 'signature verified' : `signature NOT verified (${d.error})`;
  return `${new Date(d.receivedAt).toISOString()}  ${d.webhookId || '(no webhook-id)'}  ${d.eventType ?? '(not an event)'}  ${signature}${after}`;
}
