import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { gatewayProblemResult, gatewayResponse, METHOD_NOT_ALLOWED_RESPONSE } from '../contract/problem-responses.js';
import { LAMBDA_REQUEST_PAYLOAD_BYTES } from '../contract/route-table.js';
import { findRoute, type ApiRoute, type LambdaHandler } from './api-routes.js';
import { verifyExecuteApiSignature, type LocalIamCredential, type SignatureCheck } from './execute-api-signature.js';
import { invokeWithDeadline } from './invoke-with-deadline.js';
import { restApiEvent, type RestEventOptions } from './lambda-events.js';

/**
 * A thin HTTP server that turns each request into the API Gateway REST proxy event Lambda would
 * receive, runs the real handler and writes its result back. Nothing here knows about the
 * routes' logic: authentication, validation and errors all happen in the handlers. What API
 * Gateway answers itself (unknown path, unknown method, oversized request, a function that fails
 * or overruns its timeout) is answered here from the stack's own definitions
 * (problem-responses.ts, route-table.ts), so the two agree.
 */

const STAGE = 'local';

/** The adapter's own failure (a bug here, not in a handler): nothing in AWS corresponds to it. */
const ADAPTER_FAILURE_STATUS = 500;

export interface StaticRoute {
  (method: string, pathname: string): { statusCode: number; headers: Record<string, string>; body: string | Buffer } | undefined;
}

export interface LocalServerOptions {
  routes: readonly ApiRoute[];
  staticRoutes?: readonly StaticRoute[];
  log?: (line: string) => void;
  /** Bodies larger than this are answered 413 unread; defaults to LAMBDA_REQUEST_PAYLOAD_BYTES. */
  maxBodyBytes?: number;
  /** API Gateway's integration timeout; defaults to API_GATEWAY_INTEGRATION_TIMEOUT_MS (tests shorten it). */
  integrationTimeoutMs?: number;
  /**
   * The IAM credentials whose SigV4 signatures the internal (AWS_IAM) routes accept, and the
   * region they must be scoped to. Without them every request to such a route is refused.
   */
  iam?: { credentials: readonly LocalIamCredential[]; region: string };
}

function isUtf8Text(buffer: Buffer): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(buffer);
    return true;
  } catch {
    return false;
  }
}

/** The REST proxy event API Gateway would build for this request (lambda-events.ts builds it). */
export function toApiGatewayEvent(
  req: IncomingMessage,
  body: Buffer,
  route: ApiRoute,
  pathParameters: Record<string, string> | null,
  url: URL,
  requestId: string = randomUUID(),
  iamIdentity?: RestEventOptions['iamIdentity'],
): APIGatewayProxyEvent {
  // Bytes that are not UTF-8 text arrive base64-encoded, as API Gateway passes binary payloads.
  const binary = body.length > 0 && !isUtf8Text(body);
  return restApiEvent({
    method: route.method,
    path: url.pathname,
    resource: route.resource,
    rawHeaders: req.rawHeaders,
    query: url.searchParams,
    pathParameters,
    body: body.length === 0 ? null : binary ? body.toString('base64') : body.toString('utf8'),
    isBase64Encoded: binary,
    sourceIp: (req.socket.remoteAddress ?? '127.0.0.1').replace(/^::ffff:/, ''),
    ...(req.headers['user-agent'] ? { userAgent: req.headers['user-agent'] } : {}),
    stage: STAGE,
    requestId,
    protocol: `HTTP/${req.httpVersion}`,
    domainName: req.headers.host ?? 'localhost',
    ...(iamIdentity ? { iamIdentity } : {}),
  });
}

/** API Gateway's AWS_IAM check of a request to an internal route (execute-api-signature.ts). */
function checkSignature(req: IncomingMessage, url: URL, body: Buffer, iam: LocalServerOptions['iam']): Promise<SignatureCheck> {
  if (!iam) return Promise.resolve({ ok: false, type: 'ACCESS_DENIED', reason: 'no local IAM credentials are configured' });
  const raw = req.url ?? '/';
  const q = raw.indexOf('?');
  return verifyExecuteApiSignature(
    { method: req.method ?? 'GET', path: url.pathname, rawQuery: q === -1 ? '' : raw.slice(q + 1), headers: req.headersDistinct, body },
    iam,
  );
}

function writeResult(res: ServerResponse, result: APIGatewayProxyResult): void {
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(result.headers ?? {})) headers[k] = String(v);
  for (const [k, list] of Object.entries(result.multiValueHeaders ?? {})) headers[k] = list.map(String);
  const body = result.isBase64Encoded ? Buffer.from(result.body, 'base64') : Buffer.from(result.body ?? '', 'utf8');
  res.writeHead(result.statusCode, { ...headers, 'Content-Length': String(body.length) });
  res.end(body);
}

/**
 * A known path with a method it does not have, as the path's ANY mock method answers it in AWS
 * (http-api.ts): 405 with Allow when the request has no Content-Type or a JSON one; any other
 * Content-Type matches no mapping template, and API Gateway refuses it as 415 first.
 */
function methodNotAllowed(req: IncomingMessage, allowed: string[], requestId: string): APIGatewayProxyResult {
  const contentType = req.headers['content-type'];
  const mediaType = contentType?.split(';')[0]?.trim().toLowerCase();
  if (contentType !== undefined && mediaType !== 'application/json')
    return gatewayProblemResult(gatewayResponse('UNSUPPORTED_MEDIA_TYPE'), requestId);
  return gatewayProblemResult(METHOD_NOT_ALLOWED_RESPONSE, requestId, { headers: { Allow: allowed.join(', ') } });
}

/** Reads the body up to the limit; undefined when it is larger (the rest is left unread, paused). */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      resolve(undefined);
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.off('data', onData);
        req.off('end', onEnd);
        req.pause();
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => resolve(Buffer.concat(chunks));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', reject);
  });
}

/** How much of an oversized body is read and thrown away after its 413, and for how long at most. */
const MAX_DISCARDED_BODY_BYTES = 64 * 1024 * 1024;
const MAX_DISCARD_MS = 10_000;

/**
 * The 413 for a body over the limit, as the product rules ask: answered at once with
 * `Connection: close`, then the rest of the body read and discarded (up to a bound), then the
 * connection closed. Node's own handling of `Connection: close` destroys the socket as soon as the
 * answer is written (`destroySoon`), while the client is still sending: the unread bytes make the
 * kernel answer with a reset, and a client that had not yet read the 413 loses it. Here the socket
 * only half-closes after the answer (FIN), keeps reading until the body has ended, and is closed
 * then, or when the bound is passed.
 */
function answerTooLarge(req: IncomingMessage, res: ServerResponse, result: APIGatewayProxyResult): void {
  const socket = req.socket;
  const close = () => socket.destroy();
  socket.destroySoon = function halfClose(this: typeof socket) {
    this.end();
  };
  let discarded = 0;
  req.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > MAX_DISCARDED_BODY_BYTES) close();
  });
  // Every byte has been read: nothing is left for the kernel to answer with a reset.
  req.on('end', close);
  req.on('error', close);
  const deadline = setTimeout(close, MAX_DISCARD_MS).unref();
  socket.once('close', () => clearTimeout(deadline));
  req.resume();
  res.setHeader('Connection', 'close');
  writeResult(res, result);
}

export function createLocalServer(options: LocalServerOptions): Server {
  const handlers = new Map<ApiRoute, Promise<LambdaHandler>>();
  const handlerFor = (route: ApiRoute) => {
    let pending = handlers.get(route);
    if (!pending) {
      pending = route.load();
      handlers.set(route, pending);
    }
    return pending;
  };

  return createServer((req, res) => {
    const started = performance.now();
    const url = new URL(req.url ?? '/', 'http://localhost');
    const method = (req.method ?? 'GET').toUpperCase();
    const done = (status: number) => options.log?.(`${method} ${url.pathname} ${status} ${Math.round(performance.now() - started)}ms`);

    void (async () => {
      try {
        if (url.pathname === '/health' && method === 'GET') {
          writeResult(res, { statusCode: 200, headers: { 'Content-Type': 'application/json' }, body: '{"status":"ok"}' });
          return done(200);
        }
        for (const staticRoute of options.staticRoutes ?? []) {
          const answer = staticRoute(method, url.pathname);
          if (answer) {
            res.writeHead(answer.statusCode, answer.headers);
            res.end(method === 'HEAD' ? undefined : answer.body);
            return done(answer.statusCode);
          }
        }
        // API Gateway's request id: in the event, and in any answer API Gateway gives itself.
        const requestId = randomUUID();
        const { match, allowed } = findRoute(options.routes, method, url.pathname);
        if (!match) {
          const answer = allowed.length
            ? methodNotAllowed(req, allowed, requestId)
            : gatewayProblemResult(gatewayResponse('MISSING_AUTHENTICATION_TOKEN'), requestId);
          writeResult(res, answer);
          return done(answer.statusCode);
        }
        const limit = options.maxBodyBytes ?? LAMBDA_REQUEST_PAYLOAD_BYTES;
        const body = await readBody(req, limit);
        if (body === undefined) {
          answerTooLarge(req, res, gatewayProblemResult(gatewayResponse('REQUEST_TOO_LARGE'), requestId));
          return done(413);
        }
        let iamIdentity: RestEventOptions['iamIdentity'];
        if (match.route.authorization === 'aws-iam') {
          const check = await checkSignature(req, url, body, options.iam);
          if (!check.ok) {
            options.log?.(`${match.route.functionName} ${requestId}: refused before the function (${check.type}): ${check.reason}`);
            const answer = gatewayProblemResult(gatewayResponse(check.type), requestId);
            writeResult(res, answer);
            return done(answer.statusCode);
          }
          iamIdentity = check.identity;
        }
        const handler = await handlerFor(match.route);
        const event = toApiGatewayEvent(req, body, match.route, match.pathParameters, url, requestId, iamIdentity);
        const { outcome, result, failure } = await invokeWithDeadline(handler, event, {
          functionName: match.route.functionName,
          timeoutMs: match.route.timeoutMs,
          memoryMb: match.route.memoryMb,
          integrationTimeoutMs: options.integrationTimeoutMs,
        });
        if (outcome !== 'answered') options.log?.(`${match.route.functionName} ${requestId}: ${failure}`);
        writeResult(res, result);
        done(result.statusCode);
      } catch (error) {
        // The adapter's own failure (a handler's failures are answered above, as API Gateway would).
        console.error(`local adapter error: ${(error as Error).message}`);
        if (!res.headersSent)
          writeResult(res, gatewayProblemResult(gatewayResponse('DEFAULT_5XX'), randomUUID(), { status: ADAPTER_FAILURE_STATUS }));
        done(ADAPTER_FAILURE_STATUS);
      }
    })();
  });
}
