import type { Caller } from '../auth/authenticate-key.js';
import type { Deadline } from '../deadline.js';
import { NotFoundError } from '../errors.js';
import { buildPingEvent, type WebhookPingResult } from './ping-event.js';
import type { WebhookAttemptSender, WebhookEndpointStore } from './ports.js';
import { signingSecrets } from './signature.js';

/**
 * `POST /api/v1/webhook-endpoints/{id}/ping` (product rules "Webhooks"): one `webhook.ping` event,
 * sent at once through the SSRF-safe sender and signed with the endpoint's current secrets (both,
 * during a rotation's 24 hours), answered with the attempt's outcome.
 *
 * Decisions: a **disabled** endpoint is pinged all the same, since that is how a partner checks a
 * fixed receiver before enabling it again (no event reaches it otherwise). A ping is not a delivery:
 * nothing is stored (no event, no delivery record) and the endpoint's health (`failingSince`, the
 * 5-day disable rule) is left alone, so pinging a broken receiver cannot disable it and pinging a
 * fixed one does not end a failing run that real deliveries have not ended.
 */
export interface PingEndpointDeps {
  store: Pick<WebhookEndpointStore, 'getWithSecrets'>;
  sender: WebhookAttemptSender;
  now: () => Date;
}

export async function pingEndpoint(
  deps: PingEndpointDeps,
  caller: Pick<Caller, 'companyId' | 'mode'>,
  endpointId: string | undefined,
  deadline?: Deadline,
): Promise<WebhookPingResult> {
  const found = endpointId === undefined ? undefined : await deps.store.getWithSecrets(caller.mode, caller.companyId, endpointId, deadline);
  if (!found) throw new NotFoundError('No webhook endpoint with this id exists.');
  const at = deps.now();
  const event = buildPingEvent(found.endpoint, at);
  const outcome = await deps.sender.send({
    url: found.endpoint.url,
    eventId: event.id,
    payload: JSON.stringify(event),
    secrets: signingSecrets(found.secrets, at),
  });
  // Only what the delivery log shows of an attempt: the address connected to is for operators' logs.
  return {
    delivered: outcome.delivered,
    ...(outcome.statusCode !== undefined ? { statusCode: outcome.statusCode } : {}),
    durationMs: outcome.durationMs,
    ...(outcome.error !== undefined ? { error: outcome.error } : {}),
  };
}
