import { route } from './route-entry.js';

const collection = '/api/v1/webhook-endpoints';
const one = `${collection}/{id}`;
const scope = 'webhooks:manage';

/**
 * `/api/v1/webhook-endpoints` (product rules "Webhooks"). Management: a few small reads and
 * writes each; creation and a URL change also resolve the URL's host name.
 */
export const WEBHOOK_ENDPOINT_ROUTES = {
  createWebhookEndpoint: route({
    name: 'create-webhook-endpoint',
    constructId: 'CreateWebhookEndpoint',
    method: 'POST',
    resource: collection,
    operationName: 'CreateWebhookEndpoint',
    summary: 'Create a webhook endpoint',
    scope,
    grants: { table: 'webhook-endpoints-create', webhookSecretKey: true },
    load: () => import('../../../functions/create-webhook-endpoint.js'),
  }),
  listWebhookEndpoints: route({
    name: 'list-webhook-endpoints',
    constructId: 'ListWebhookEndpoints',
    method: 'GET',
    resource: collection,
    operationName: 'ListWebhookEndpoints',
    summary: 'List webhook endpoints',
    scope,
    grants: { table: 'webhook-endpoints-list' },
    load: () => import('../../../functions/list-webhook-endpoints.js'),
  }),
  getWebhookEndpoint: route({
    name: 'get-webhook-endpoint',
    constructId: 'GetWebhookEndpoint',
    method: 'GET',
    resource: one,
    operationName: 'GetWebhookEndpoint',
    summary: 'Read a webhook endpoint',
    scope,
    grants: { table: 'webhook-endpoints-read' },
    load: () => import('../../../functions/get-webhook-endpoint.js'),
  }),
  updateWebhookEndpoint: route({
    name: 'update-webhook-endpoint',
    constructId: 'UpdateWebhookEndpoint',
    method: 'PATCH',
    resource: one,
    operationName: 'UpdateWebhookEndpoint',
    summary: 'Change a webhook endpoint',
    scope,
    grants: { table: 'webhook-endpoints-change' },
    load: () => import('../../../functions/update-webhook-endpoint.js'),
  }),
  deleteWebhookEndpoint: route({
    name: 'delete-webhook-endpoint',
    constructId: 'DeleteWebhookEndpoint',
    method: 'DELETE',
    resource: one,
    operationName: 'DeleteWebhookEndpoint',
    summary: 'Delete a webhook endpoint',
    scope,
    grants: { table: 'webhook-endpoints-delete' },
    load: () => import('../../../functions/delete-webhook-endpoint.js'),
  }),
  rotateWebhookEndpointSecret: route({
    name: 'rotate-webhook-endpoint-secret',
    constructId: 'RotateWebhookEndpointSecret',
    method: 'POST',
    resource: `${one}/rotate-secret`,
    operationName: 'RotateWebhookEndpointSecret',
    summary: "Rotate a webhook endpoint's secret",
    scope,
    grants: { table: 'webhook-endpoints-change', webhookSecretKey: true },
    load: () => import('../../../functions/rotate-webhook-endpoint-secret.js'),
  }),
  // The ping waits for the receiver: the sender's 10 s for the whole attempt, plus opening the
  // endpoint's secrets (the sealing key is read once per cold start) and the answer. It reads the
  // endpoint with its secrets and signs.
  pingWebhookEndpoint: route({
    name: 'ping-webhook-endpoint',
    constructId: 'PingWebhookEndpoint',
    method: 'POST',
    resource: `${one}/ping`,
    operationName: 'PingWebhookEndpoint',
    summary: 'Ping a webhook endpoint',
    scope,
    timeoutSeconds: 15,
    grants: { table: 'webhook-endpoints-ping', webhookSecretKey: true },
    load: () => import('../../../functions/ping-webhook-endpoint.js'),
  }),
  // Two reads in parallel (the endpoint and the event), the job on the endpoint's waiting list, one conditional write of a
  // WHD# record, then a fill: one SQS message to the fast lane when a slot is free.
  redeliverWebhookEvent: route({
    name: 'redeliver-webhook-event',
    constructId: 'RedeliverWebhookEvent',
    method: 'POST',
    resource: `${one}/redeliver`,
    operationName: 'RedeliverWebhookEvent',
    summary: 'Redeliver an event',
    scope,
    grants: { table: 'webhook-deliveries-redeliver', webhookRedeliveries: true },
    load: () => import('../../../functions/redeliver-webhook-event.js'),
  }),
  // One read of the endpoint and one Query of its delivery log (WHD#); opens cursors.
  listWebhookDeliveries: route({
    name: 'list-webhook-deliveries',
    constructId: 'ListWebhookDeliveries',
    method: 'GET',
    resource: `${one}/deliveries`,
    operationName: 'ListWebhookDeliveries',
    summary: 'List an endpoint\u2019s deliveries',
    scope,
    grants: { table: 'webhook-deliveries-list', cursorSecret: true },
    load: () => import('../../../functions/list-webhook-deliveries.js'),
  }),
};
