import type { AddressInfo } from 'node:net';
import { request, type Server } from 'node:http';
import { API_ROUTES } from '../../infra/local/api-routes.js';
import { createLocalServer } from '../../infra/local/http-adapter.js';
import { LAMBDA_REQUEST_PAYLOAD_BYTES, methodsOf, routedResources } from '../../infra/contract/route-table.js';
import { methods } from './infra/api-methods.js';
import { resourcesOfType, synth } from './infra/synth.js';

/**
 * What the local server answers itself is what the synthesised stack's API Gateway answers: the
 * same status, headers and body (with its own request id) for an unknown path, a method a path
 * does not have, an oversized request and a function that does not answer in time. The expected
 * answers are read from the CloudFormation template, not from the definitions both are built from.
 */
interface Answer {
  status: number;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

/** The answer a gateway response or mock integration response of the template gives for a request id. */
function fromTemplate(
  status: string | undefined,
  parameters: Record<string, string>,
  prefix: string,
  template: string,
  requestId: string,
): Answer {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(parameters))
    headers[name.slice(prefix.length).toLowerCase()] = value.replace(/^'(.*)'$/, '$1');
  return {
    status: Number(status),
    headers,
    body: JSON.parse(template.replace('$context.requestId', requestId)) as Record<string, unknown>,
  };
}

function gatewayAnswer(type: string, requestId: string): Answer {
  const found = Object.values(resourcesOfType(synth().template, 'AWS::ApiGateway::GatewayResponse')).find(
    (r) => r.Properties.ResponseType === type,
  );
  if (!found) throw new Error(`the template has no ${type} gateway response`);
  const p = found.Properties as {
    StatusCode?: string;
    ResponseParameters: Record<string, string>;
    ResponseTemplates: Record<string, string>;
  };
  return fromTemplate(
    p.StatusCode,
    p.ResponseParameters,
    'gatewayresponse.header.',
    p.ResponseTemplates['application/json'] ?? '',
    requestId,
  );
}

function methodNotAllowedAnswer(path: string, requestId: string): Answer {
  const found = methods(synth().template).find((m) => m.path === path && m.method.Properties.HttpMethod === 'ANY');
  if (!found) throw new Error(`the template has no ANY method on ${path}`);
  const [response] = found.method.Properties.Integration.IntegrationResponses as {
    StatusCode: string;
    ResponseParameters: Record<string, string>;
    ResponseTemplates: Record<string, string>;
  }[];
  return fromTemplate(
    response?.StatusCode,
    response?.ResponseParameters ?? {},
    'method.response.header.',
    response?.ResponseTemplates['application/json'] ?? '',
    requestId,
  );
}

let releaseStuck: () => void = () => undefined;
const stuck = new Promise<void>((resolve) => (releaseStuck = resolve));
let server: Server;
let base: string;

beforeAll(async () => {
  // The real routes, timeouts and limits; only the handlers never answer, and API Gateway's
  // 29 s is shortened so that it, not the functions' longer timeouts, ends the wait.
  const routes = API_ROUTES.map((route) => ({ ...route, load: async () => async () => (await stuck, { statusCode: 200, body: '' }) }));
  server = createLocalServer({ routes, integrationTimeoutMs: 20 });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  releaseStuck();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** node:http, to send a declared length without the body, and to read every header as sent. */
function send(method: string, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { method, headers }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => {
        const picked: Record<string, string> = {};
        for (const name of ['content-type', 'cache-control', 'allow', 'retry-after']) {
          const value = res.headers[name];
          if (typeof value === 'string') picked[name] = value;
        }
        resolve({ status: res.statusCode ?? 0, headers: picked, body: JSON.parse(text) as Record<string, unknown> });
      });
    });
    req.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' || error.code === 'EPIPE' ? undefined : reject(error)));
    req.end();
  });
}

describe('the local server answers as the stack’s API Gateway does', () => {
  it('for an unknown path (MISSING_AUTHENTICATION_TOKEN)', async () => {
    const got = await send('GET', '/api/v2/cases');
    expect(got).toEqual(gatewayAnswer('MISSING_AUTHENTICATION_TOKEN', String(got.body.requestId)));
  });

  it.each(routedResources())('for a method %s does not have (its ANY mock method: 405 with Allow)', async (resource) => {
    const path = resource.replace(/\{\w+\}/g, 'case_0000000000000000000000');
    const method = ['DELETE', 'PUT', 'PATCH'].find((m) => !methodsOf(resource).includes(m)) ?? 'DELETE';
    const got = await send(method, path);
    const want = methodNotAllowedAnswer(resource, String(got.body.requestId));
    expect(got).toEqual(want);
    expect(got.headers.allow).toBe(methodsOf(resource).join(', '));
  });

  it('for a request larger than a Lambda function accepts (REQUEST_TOO_LARGE)', async () => {
    const got = await send('POST', '/api/v1/cases', {
      'Content-Type': 'application/json',
      'Content-Length': String(LAMBDA_REQUEST_PAYLOAD_BYTES + 1),
    });
    expect(got).toEqual(gatewayAnswer('REQUEST_TOO_LARGE', String(got.body.requestId)));
  });

  it('for a function that has not answered when the integration timeout passes (INTEGRATION_TIMEOUT: 504)', async () => {
    const got = await send('GET', '/api/v1/cases/case_0000000000000000000000');
    expect(got).toEqual(gatewayAnswer('INTEGRATION_TIMEOUT', String(got.body.requestId)));
    expect(got.status).toBe(504);
  });
});
