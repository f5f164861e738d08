import type { Deadline } from '../deadline.js';
import type { Mode } from '../mode.js';
import type { EndpointSecret } from './signature.js';
import type { WebhookEndpoint } from './webhook-endpoint.js';

/**
 * What the webhook endpoint use cases need from outside, implemented in lib/adapters (DynamoDB
 * with sealed secrets; the system resolver). Every storage call takes the request's Deadline and
 * reads strongly consistent: an endpoint reported created is found by the very next read. Only
 * the endpoints of `mode` and `companyId` exist for a call: another mode's or company's endpoint
 * is not found.
 */
export interface WebhookEndpointStore {
  /**
   * Stores a new endpoint with its secrets, unless the company already has `maxPerMode` endpoints
   * in its mode: then nothing is stored and WebhookEndpointLimitError is thrown. The limit holds
   * under concurrent creates.
   */
  create(endpoint: WebhookEndpoint, secrets: readonly EndpointSecret[], maxPerMode: number, deadline?: Deadline): Promise<void>;
  /** Every endpoint of the company in the mode, in no particular order. */
  list(mode: Mode, companyId: string, deadline?: Deadline): Promise<WebhookEndpoint[]>;
  get(mode: Mode, companyId: string, endpointId: string, deadline?: Deadline): Promise<WebhookEndpoint | undefined>;
  /** The endpoint with its secrets in the clear (rotation and delivery only). */
  getWithSecrets(
    mode: Mode,
    companyId: string,
    endpointId: string,
    deadline?: Deadline,
  ): Promise<{ endpoint: WebhookEndpoint; secrets: EndpointSecret[] } | undefined>;
  /**
   * Replaces the endpoint's settings (and its secrets, when given) if its stored version is still
   * `expectedVersion`: `stale` when another change came first, `gone` when it no longer exists.
   */
  update(
    endpoint: WebhookEndpoint,
    expectedVersion: number,
    secrets: readonly EndpointSecret[] | undefined,
    deadline?: Deadline,
  ): Promise<'updated' | 'stale' | 'gone'>;
  /** Removes the endpoint and its secrets; false when it did not exist. */
  delete(mode: Mode, companyId: string, endpointId: string, deadline?: Deadline): Promise<boolean>;
}

/**
 * Resolves a host name to every address it has (IPv4 and IPv6), as the sender will (`dns.lookup` with
 * `all: true`: `systemResolver` in lib/adapters/webhooks/webhook-sender.ts). A name that does not resolve throws.
 */
export type HostResolver = (hostname: string) => Promise<string[]>;
