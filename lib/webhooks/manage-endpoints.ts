import type * as z from 'zod';
import type { Caller } from '../auth/authenticate-key.js';
import type { Deadline } from '../deadline.js';
import { InvalidRequestError, NotFoundError } from '../errors.js';
import { randomBase62 } from '../random-id.js';
import { bareHostname, checkEndpointUrl, isLocalDevelopmentUrl, refusedResolution, type EndpointUrlOptions } from './endpoint-url.js';
import { classifyAddress } from './address-class.js';
import type { HostResolver, WebhookEndpointStore } from './ports.js';
import { generateEndpointSecret, rotateSecrets } from './signature.js';
import {
  endpointView,
  ENDPOINT_ID_PREFIX,
  MAX_ENDPOINTS_PER_MODE,
  type CreateEndpointRequest,
  type UpdateEndpointRequest,
  type WebhookEndpoint,
  type WebhookEndpointView,
  type createdWebhookEndpointSchema,
} from './webhook-endpoint.js';

/**
 * The endpoint management use cases (product rules "Webhooks", scope `webhooks:manage`). Every
 * one works in the caller's company and mode only: another company's endpoint, or one of the
 * other mode, is answered exactly like a missing one (404).
 */
export interface EndpointManagementDeps {
  store: WebhookEndpointStore;
  resolver: HostResolver;
  now: () => Date;
  /** npm start only (infra/local): loopback URLs are accepted. Never set in a deployed stack. */
  urlOptions?: EndpointUrlOptions;
}

/** Concurrent changes to one endpoint are rare (one partner's dashboard); a few rounds settle them. */
const UPDATE_ROUNDS = 3;

const notFound = () => new NotFoundError('No webhook endpoint with this id exists.');

export function newEndpointId(): string {
  return ENDPOINT_ID_PREFIX + randomBase62(22);
}

/**
 * The URL rules at creation or change: the text (endpoint-url.ts), then, for a name, every
 * address it resolves to now. Delivery checks again against the address it connects to, so this
 * is the partner's early answer, not the defence.
 */
export async function acceptableEndpointUrl(input: string, deps: Pick<EndpointManagementDeps, 'resolver' | 'urlOptions'>): Promise<string> {
  const url = checkEndpointUrl(input, deps.urlOptions);
  const host = bareHostname(url);
  if (classifyAddress(host) !== 'not-an-ip-address') return url.href;
  // npm start's own loopback URLs (the option is never set in a deployed stack): nothing to resolve.
  if (deps.urlOptions?.allowLocalDevelopment && isLocalDevelopmentUrl(url)) return url.href;
  let addresses: string[];
  try {
    addresses = await deps.resolver(host);
  } catch {
    throw new InvalidRequestError('The webhook endpoint URL is not acceptable.', [
      { field: 'url', message: `url: ${host} does not resolve` },
    ]);
  }
  const refused = refusedResolution(host, addresses, deps.urlOptions);
  if (refused !== undefined) {
    throw new InvalidRequestError('The webhook endpoint URL is not acceptable.', [
      { field: 'url', message: `url must reach a public address: ${refused}` },
    ]);
  }
  return url.href;
}

export type CreatedEndpoint = z.infer<typeof createdWebhookEndpointSchema>;

export async function createEndpoint(
  deps: EndpointManagementDeps,
  caller: Caller,
  request: CreateEndpointRequest,
  deadline?: Deadline,
): Promise<CreatedEndpoint> {
  const url = await acceptableEndpointUrl(request.url, deps);
  const at = deps.now().toISOString();
  const endpoint: WebhookEndpoint = {
    endpointId: newEndpointId(),
    companyId: caller.companyId,
    mode: caller.mode,
    url,
    events: request.events,
    description: request.description ?? '',
    status: 'enabled',
    createdAt: at,
    updatedAt: at,
    version: 1,
  };
  const secret = generateEndpointSecret();
  await deps.store.create(endpoint, [{ secret, createdAt: at }], MAX_ENDPOINTS_PER_MODE, deadline);
  return { ...endpointView(endpoint), secret };
}

/** Newest first (ids are random, so creation time decides; the id breaks ties). At most 16, so no cursor. */
export async function listEndpoints(deps: Pick<EndpointManagementDeps, 'store'>, caller: Caller, deadline?: Deadline) {
  const endpoints = await deps.store.list(caller.mode, caller.companyId, deadline);
  endpoints.sort((a, b) =>
    a.createdAt === b.createdAt ? b.endpointId.localeCompare(a.endpointId) : b.createdAt.localeCompare(a.createdAt),
  );
  return { data: endpoints.map(endpointView) };
}

export async function getEndpoint(
  deps: Pick<EndpointManagementDeps, 'store'>,
  caller: Caller,
  endpointId: string | undefined,
  deadline?: Deadline,
): Promise<WebhookEndpointView> {
  const found = endpointId === undefined ? undefined : await deps.store.get(caller.mode, caller.companyId, endpointId, deadline);
  if (!found) throw notFound();
  return endpointView(found);
}

export async function updateEndpoint(
  deps: EndpointManagementDeps,
  caller: Caller,
  endpointId: string | undefined,
  request: UpdateEndpointRequest,
  deadline?: Deadline,
): Promise<WebhookEndpointView> {
  if (endpointId === undefined) throw notFound();
  // Checked once, before any read: a refused URL is refused whatever the endpoint's state.
  const url = request.url === undefined ? undefined : await acceptableEndpointUrl(request.url, deps);
  for (let round = 0; round < UPDATE_ROUNDS; round++) {
    const current = await deps.store.get(caller.mode, caller.companyId, endpointId, deadline);
    if (!current) throw notFound();
    const next: WebhookEndpoint = {
      ...current,
      ...(url !== undefined ? { url } : {}),
      ...(request.events !== undefined ? { events: request.events } : {}),
      ...(request.description !== undefined ? { description: request.description } : {}),
      ...(request.status !== undefined ? { status: request.status } : {}),
      updatedAt: deps.now().toISOString(),
      version: current.version + 1,
    };
    // Enabling a disabled endpoint starts it afresh: the reason it was disabled and the failure run that led there no longer
    // hold. An endpoint already enabled keeps its health (the store writes only the settings): its failing run goes on.
    const reenabling = request.status === 'enabled' && current.status === 'disabled';
    if (request.status === 'enabled') delete next.disabledReason;
    const outcome = await deps.store.update(next, current.version, undefined, deadline, reenabling ? { resetHealth: true } : {});
    if (outcome === 'updated') return endpointView(next);
    if (outcome === 'gone') throw notFound();
  }
  throw new Error(`webhook endpoint ${endpointId} kept changing under ${UPDATE_ROUNDS} updates`);
}

export async function deleteEndpoint(
  deps: Pick<EndpointManagementDeps, 'store'>,
  caller: Caller,
  endpointId: string | undefined,
  deadline?: Deadline,
): Promise<void> {
  if (endpointId === undefined || !(await deps.store.delete(caller.mode, caller.companyId, endpointId, deadline))) throw notFound();
}

/** A new current secret; the one it replaces keeps signing beside it for 24 hours (signature.ts). */
export async function rotateEndpointSecret(
  deps: Pick<EndpointManagementDeps, 'store' | 'now'>,
  caller: Caller,
  endpointId: string | undefined,
  deadline?: Deadline,
): Promise<{ secret: string }> {
  if (endpointId === undefined) throw notFound();
  for (let round = 0; round < UPDATE_ROUNDS; round++) {
    const found = await deps.store.getWithSecrets(caller.mode, caller.companyId, endpointId, deadline);
    if (!found) throw notFound();
    const now = deps.now();
    const secret = generateEndpointSecret();
    const next: WebhookEndpoint = { ...found.endpoint, updatedAt: now.toISOString(), version: found.endpoint.version + 1 };
    const outcome = await deps.store.update(next, found.endpoint.version, rotateSecrets(found.secrets, secret, now), deadline);
    if (outcome === 'updated') return { secret };
    if (outcome === 'gone') throw notFound();
  }
  throw new Error(`webhook endpoint ${endpointId} kept changing under ${UPDATE_ROUNDS} rotations`);
}
