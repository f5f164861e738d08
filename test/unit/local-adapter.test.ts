import { connect, type AddressInfo } from 'node:net';
import { Worker } from 'node:worker_threads';
import { request, type Server } from 'node:http';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { findRoute, type ApiRoute } from '../../infra/local/api-routes.js';
import { createLocalServer } from '../../infra/local/http-adapter.js';

/**
 * The local HTTP adapter (`npm start`) against stub handlers: the API Gateway REST proxy event and
 * Lambda context it builds, how it writes a handler's result, and what it answers itself.
 */
interface Call {
  event: APIGatewayProxyEvent;
  context: Context;
  remainingMs: number;
}

const calls: Call[] = [];
let respond: (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult> = async () => ({ statusCode: 200, body: '{}' });

const STUB_TIMEOUT_MS = 20_000;
const stub = (method: 'GET' | 'POST', resource: string, timeoutMs = STUB_TIMEOUT_MS): ApiRoute => ({
  method,
  resource,
  functionName: `stub-${method.toLowerCase()}`,
  timeoutMs,
  memoryMb: 384,
  load: async () => async (event, context) => {
    calls.push({ event, context, remainingMs: context.getRemainingTimeInMillis() });
    return respond(event);
  },
});

/**
 * Handlers that never answer: each overruns whatever deadline it is given. They are released when
 * the file ends, so nothing is left pending.
 */
let releaseStuck: () => void = () => undefined;
const stuck = new Promise<void>((resolve) => (releaseStuck = resolve));
const stuckRoute = (resource: string, timeoutMs: number): ApiRoute => ({
  method: 'GET',
  resource,
  functionName: 'stub-stuck',
  timeoutMs,
  memoryMb: 128,
  load: async () => async () => {
    await stuck;
    return { statusCode: 200, body: 'too late' };
  },
});

const ROUTES = [
  stub('GET', '/api/v1/things/{id}'),
  stub('POST', '/api/v1/things/{id}'),
  stub('POST', '/api/v1/things'),
  // A function timeout far shorter than the integration timeout: Lambda ends the function first.
  stuckRoute('/api/v1/slow-function', 25),
  // A function timeout longer than the (shortened) integration timeout: API Gateway gives up first.
  stuckRoute('/api/v1/slow-integration', 60_000),
];
const LIMIT = 1024;
const INTEGRATION_TIMEOUT_MS = 50;
let server: Server;
let base: string;
const logged: string[] = [];

beforeAll(async () => {
  server = createLocalServer({
    routes: ROUTES,
    maxBodyBytes: LIMIT,
    integrationTimeoutMs: INTEGRATION_TIMEOUT_MS,
    log: (line) => logged.push(line),
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  releaseStuck();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

beforeEach(() => {
  calls.length = 0;
  respond = async () => ({ statusCode: 200, body: '{}' });
});

/** node:http rather than fetch: fetch folds repeated headers into one line. */
function rawRequest(path: string, method: string, headers: Record<string, string | string[]>, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { method, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const lastCall = (): Call => {
  expect(calls).toHaveLength(1);
  return calls[0]!;
};

describe('the event the adapter builds', () => {
  it('has the REST proxy shape: resource template, path, parameters, headers, query, stage, request context', async () => {
    const headers = { 'Content-Type': 'application/json', 'X-Trace': 'one', 'X-Multi': ['a', 'b'] };
    await rawRequest('/api/v1/things/abc%20d?tag=x&tag=y&single=1', 'POST', headers, '{"hello":"wörld"}');
    const { event, context, remainingMs } = lastCall();

    expect(event).toMatchObject({
      resource: '/api/v1/things/{id}',
      path: '/api/v1/things/abc%20d',
      httpMethod: 'POST',
      pathParameters: { id: 'abc d' },
      queryStringParameters: { tag: 'y', single: '1' },
      multiValueQueryStringParameters: { tag: ['x', 'y'], single: ['1'] },
      stageVariables: null,
      body: '{"hello":"wörld"}',
      isBase64Encoded: false,
    });
    // Header names keep the client's spelling; `headers` holds the last value of a repeated header.
    expect(event.headers).toMatchObject({ 'Content-Type': 'application/json', 'X-Trace': 'one', 'X-Multi': 'b' });
    expect(event.multiValueHeaders).toMatchObject({ 'Content-Type': ['application/json'], 'X-Trace': ['one'], 'X-Multi': ['a', 'b'] });

    const rc = event.requestContext;
    expect(rc).toMatchObject({
      stage: 'local',
      httpMethod: 'POST',
      resourcePath: '/api/v1/things/{id}',
      path: '/local/api/v1/things/abc%20d',
      identity: expect.objectContaining({ sourceIp: '127.0.0.1' }),
    });
    expect(rc.requestId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(Math.abs(rc.requestTimeEpoch - Date.now())).toBeLessThan(5_000);
    expect(rc.requestTime).toMatch(/^\d\d\/[A-Z][a-z]{2}\/\d{4}:\d\d:\d\d:\d\d \+0000$/);

    expect(context.awsRequestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(context.awsRequestId).not.toBe(rc.requestId);
    expect(context.functionName).toBe('stub-post');
    expect(context.memoryLimitInMB).toBe('384');
    // The context counts down from the route's function timeout.
    expect(remainingMs).toBeGreaterThan(STUB_TIMEOUT_MS - 5_000);
    expect(remainingMs).toBeLessThanOrEqual(STUB_TIMEOUT_MS);
  });

  it('has null body, parameters and query when there are none', async () => {
    await fetch(`${base}/api/v1/things`, { method: 'POST' });
    expect(lastCall().event).toMatchObject({
      body: null,
      isBase64Encoded: false,
      pathParameters: null,
      queryStringParameters: null,
      multiValueQueryStringParameters: null,
    });
  });

  it('base64-encodes a body that is not UTF-8 and keeps every byte', async () => {
    const bytes = Buffer.from([0x25, 0x50, 0x44, 0x46, 0xff, 0xfe, 0x00, 0x80, 0xc3]);
    await fetch(`${base}/api/v1/things`, { method: 'POST', headers: { 'Content-Type': 'application/octet-stream' }, body: bytes });
    const { event } = lastCall();
    expect(event.isBase64Encoded).toBe(true);
    expect(Buffer.from(event.body!, 'base64')).toEqual(bytes);
  });
});

describe('the response the adapter writes', () => {
  it('writes status, headers, multi-value headers and a base64 body as bytes', async () => {
    respond = async () => ({
      statusCode: 201,
      headers: { 'Content-Type': 'application/pdf', 'X-One': 'single' },
      multiValueHeaders: { 'Set-Cookie': ['a=1', 'b=2'] },
      body: Buffer.from([0xde, 0xad, 0xbe, 0xef]).toString('base64'),
      isBase64Encoded: true,
    });
    const res = await fetch(`${base}/api/v1/things/1`);
    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(res.headers.get('x-one')).toBe('single');
    expect(res.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
    expect(Buffer.from(await res.arrayBuffer())).toEqual(Buffer.from([0xde, 0xad, 0xbe, 0xef]));
  });

  it('answers 502 problem details, as API Gateway does for a function error, without the error text, when the handler throws', async () => {
    respond = async () => {
      throw new Error('secret internals');
    };
    const res = await fetch(`${base}/api/v1/things/1`);
    expect(res.status).toBe(502);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    const text = await res.text();
    // DEFAULT_5XX does not pin a status, so its body names none (problem-responses.ts).
    expect(JSON.parse(text)).toEqual({
      type: '/problems/internal',
      title: 'Internal error',
      detail: expect.any(String),
      code: 'INTERNAL',
      requestId: lastCall().event.requestContext.requestId,
    });
    expect(text).not.toContain('secret internals');
  });

  it('answers 502 as API Gateway does when the handler returns something that is not a proxy result', async () => {
    respond = async () => ({ body: 'no status code' }) as unknown as APIGatewayProxyResult;
    const res = await fetch(`${base}/api/v1/things/1`);
    expect(res.status).toBe(502);
    expect(await res.json()).toMatchObject({ code: 'INTERNAL' });
  });
});

describe('a function that does not answer in time', () => {
  it('answers 504 GATEWAY_TIMEOUT problem details with the request id once the integration timeout passes first', async () => {
    const res = await fetch(`${base}/api/v1/slow-integration`);
    expect(res.status).toBe(504);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(res.headers.get('cache-control')).toBe('no-store');
    const body = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(['type', 'title', 'status', 'detail', 'code', 'requestId']);
    expect(body).toMatchObject({ type: '/problems/gateway-timeout', title: 'Gateway timeout', status: 504, code: 'GATEWAY_TIMEOUT' });
    expect(body.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(logged.some((line) => line.includes(String(body.requestId)) && line.includes('integration timeout'))).toBe(true);
  });

  it('answers 502 as API Gateway does when the function overruns its own timeout first ("Task timed out")', async () => {
    const res = await fetch(`${base}/api/v1/slow-function`);
    expect(res.status).toBe(502);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ code: 'INTERNAL', requestId: expect.any(String) });
    expect(body.status).toBeUndefined();
    expect(logged.some((line) => line.includes(String(body.requestId)) && line.includes('Task timed out after 0.03 seconds'))).toBe(true);
  });
});

describe('what the adapter answers itself', () => {
  it('answers GET /health with 200 {"status":"ok"}', async () => {
    const res = await fetch(`${base}/health`);
    expect([res.status, await res.json()]).toEqual([200, { status: 'ok' }]);
  });

  it('answers an unknown path 404 NOT_FOUND and a known path with another method 405 with Allow', async () => {
    const unknown = await fetch(`${base}/api/v1/nothing`);
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-type')).toBe('application/problem+json');
    expect(await unknown.json()).toMatchObject({ status: 404, code: 'NOT_FOUND', requestId: expect.any(String) });

    const wrong = await fetch(`${base}/api/v1/things/1`, { method: 'DELETE' });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('GET, POST');
    expect(await wrong.json()).toMatchObject({ status: 405, code: 'METHOD_NOT_ALLOWED' });

    const json = await fetch(`${base}/api/v1/things`, {
      method: 'PUT',
      headers: { 'Content-Type': 'Application/JSON; charset=utf-8' },
      body: '{}',
    });
    expect([json.status, json.headers.get('allow')]).toEqual([405, 'POST']);
    expect(calls).toHaveLength(0);
  });

  it('answers a known path with another method and a non-JSON body 415, as API Gateway refuses it before the mock method', async () => {
    const res = await fetch(`${base}/api/v1/things`, { method: 'PUT', headers: { 'Content-Type': 'text/plain' }, body: 'hello' });
    expect(res.status).toBe(415);
    expect(await res.json()).toMatchObject({ status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' });
    expect(calls).toHaveLength(0);
  });

  it('answers 413 without calling the handler when the declared length is over the limit', async () => {
    const res = await fetch(`${base}/api/v1/things`, { method: 'POST', body: 'x'.repeat(LIMIT + 1) });
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    expect(calls).toHaveLength(0);
  });

  it('answers 413 when a chunked body without a length grows over the limit', async () => {
    const chunk = new TextEncoder().encode('y'.repeat(512));
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ < 4) controller.enqueue(chunk);
        else controller.close();
      },
    });
    const res = await fetch(`${base}/api/v1/things`, { method: 'POST', body, duplex: 'half' } as RequestInit);
    expect(res.status).toBe(413);
    expect(calls).toHaveLength(0);
  });

  it('passes a body of exactly the limit on to the handler', async () => {
    await fetch(`${base}/api/v1/things`, { method: 'POST', body: 'z'.repeat(LIMIT) });
    expect(lastCall().event.body).toHaveLength(LIMIT);
  });
});

/**
 * A client as curl or an SDK sends a body: one socket, the body written chunk by chunk (with
 * backpressure), still writing when the answer comes. Resolves with every byte it received and
 * the socket error it met, if any (a reset shows as ECONNRESET or EPIPE).
 */
function sendWhileReading(port: number, bodyBytes: number): Promise<{ received: string; error: string | undefined; sent: number }> {
  return new Promise((resolve) => {
    // Half-open allowed: it goes on sending its whole body after the server's FIN, as a client
    // that looks at the answer only once it has sent everything does.
    const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    const received: Buffer[] = [];
    let error: string | undefined;
    let sent = 0;
    const chunk = Buffer.alloc(64 * 1024, 'x');
    socket.on('data', (d: Buffer) => received.push(d));
    socket.on('error', (e: NodeJS.ErrnoException) => (error = e.code ?? e.message));
    socket.on('close', () => resolve({ received: Buffer.concat(received).toString('latin1'), error, sent }));
    socket.on('connect', () => {
      socket.write(
        `POST /api/v1/things HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: ${bodyBytes}\r\n\r\n`,
      );
      const writeMore = () => {
        while (sent < bodyBytes && !socket.destroyed) {
          const piece = chunk.subarray(0, Math.min(chunk.length, bodyBytes - sent));
          sent += piece.length;
          if (!socket.write(piece)) {
            socket.once('drain', writeMore);
            return;
          }
        }
        if (!socket.destroyed) socket.end();
      };
      writeMore();
    });
  });
}

describe('a body over the limit from a client still sending it', () => {
  const SEVEN_MIB = 7 * 1024 * 1024;
  let realLimitServer: Server;
  let port: number;
  beforeAll(async () => {
    // The limit `npm start` has (Lambda's 6 MB), not this file's small one.
    realLimitServer = createLocalServer({ routes: ROUTES });
    await new Promise<void>((resolve) => realLimitServer.listen(0, '127.0.0.1', () => resolve()));
    port = (realLimitServer.address() as AddressInfo).port;
  });
  afterAll(async () => {
    realLimitServer.closeAllConnections();
    await new Promise<void>((resolve) => realLimitServer.close(() => resolve()));
  });

  const expectWholeAnswer = ({ received, error, sent }: { received: string; error: string | undefined; sent: number }) => {
    expect(error).toBeUndefined();
    expect(sent).toBe(SEVEN_MIB);
    expect(received).toMatch(/^HTTP\/1\.1 413 /);
    expect(received).toMatch(/\r\nConnection: close\r\n/i);
    const body = received.slice(received.indexOf('\r\n\r\n') + 4);
    expect(JSON.parse(body)).toMatchObject({ status: 413, code: 'PAYLOAD_TOO_LARGE' });
  };

  it('gets its 413 problem details and a graceful close, never a reset, 20 times in a row', async () => {
    for (let run = 0; run < 20; run++) expectWholeAnswer(await sendWhileReading(port, SEVEN_MIB));
    expect(calls).toHaveLength(0);
  }, 60_000);

  it('gets its 413 every time while another thread keeps a core busy', async () => {
    const busy = new Worker('for (;;) {}', { eval: true });
    try {
      for (let run = 0; run < 5; run++) expectWholeAnswer(await sendWhileReading(port, SEVEN_MIB));
    } finally {
      await busy.terminate();
    }
  }, 60_000);
});

describe('route matching', () => {
  it('matches templates segment by segment and lists the methods of a known path', () => {
    expect(findRoute(ROUTES, 'GET', '/api/v1/things/42').match?.pathParameters).toEqual({ id: '42' });
    expect(findRoute(ROUTES, 'POST', '/api/v1/things').match?.pathParameters).toBeNull();
    expect(findRoute(ROUTES, 'GET', '/api/v1/things')).toEqual({ allowed: ['POST'] });
    expect(findRoute(ROUTES, 'DELETE', '/api/v1/things/1')).toEqual({ allowed: ['GET', 'POST'] });
    expect(findRoute(ROUTES, 'GET', '/api/v1/things/')).toEqual({ allowed: [] });
    expect(findRoute(ROUTES, 'GET', '/api/v1/things/1/2')).toEqual({ allowed: [] });
    expect(findRoute(ROUTES, 'GET', '/api/v1/things/%E0%A4%A')).toEqual({ allowed: [] });
  });
});
