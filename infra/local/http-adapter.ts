import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { CodedError, NotFoundError } from '../../lib/errors.js';
import { InternalError, MethodNotAllowedError, PayloadTooLargeError, problemResponse, statusOf } from '../../lib/http/problem-details.js';
import { lambdaContext } from './lambda-events.js';
import { findRoute, type ApiRoute, type LambdaHandler } from './api-routes.js';

/**
 * A thin HTTP server that turns each request into the API Gateway REST proxy event Lambda would
 * receive, runs the real handler and writes its result back. Nothing here knows about the
 * routes' logic: authentication, validation and errors all happen in the handlers.
 */

/** API Gateway refuses payloads over 10 MB and Lambda over 6 MB; the handlers' own limit is 1 MiB. */
export const MAX_ADAPTER_BODY_BYTES = 6 * 1024 * 1024;
const LAMBDA_TIMEOUT_MS = 30_000;
const STAGE = 'local';

export interface StaticRoute {
  (method: string, pathname: string): { statusCode: number; headers: Record<string, string>; body: string | Buffer } | undefined;
}

export interface LocalServerOptions {
  routes: readonly ApiRoute[];
  staticRoutes?: readonly StaticRoute[];
  log?: (line: string) => void;
  /** Bodies larger than this are answered 413 unread; defaults to MAX_ADAPTER_BODY_BYTES. */
  maxBodyBytes?: number;
}

/** API Gateway's `requestContext.requestTime` format: `09/Apr/2015:12:34:56 +0000`. */
function requestTime(epochMs: number): string {
  const [, day, month, year, time] = /^\w+, (\d\d) (\w+) (\d+) (\S+) GMT$/.exec(new Date(epochMs).toUTCString()) ?? [];
  return `${day}/${month}/${year}:${time} +0000`;
}

function isUtf8Text(buffer: Buffer): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(buffer);
    return true;
  } catch {
    return false;
  }
}

export function toApiGatewayEvent(req: IncomingMessage, body: Buffer, route: ApiRoute, pathParameters: Record<string, string> | null, url: URL): APIGatewayProxyEvent {
  const headers: Record<string, string> = {};
  const multiValueHeaders: Record<string, string[]> = {};
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i] as string;
    const value = req.rawHeaders[i + 1] as string;
    headers[name] = value; // API Gateway keeps the last value in `headers`
    (multiValueHeaders[name] ??= []).push(value);
  }
  const query: Record<string, string> = {};
  const multiQuery: Record<string, string[]> = {};
  for (const [k, v] of url.searchParams) {
    query[k] = v;
    (multiQuery[k] ??= []).push(v);
  }
  const binary = body.length > 0 && !isUtf8Text(body);
  const text = body.length === 0 ? null : binary ? body.toString('base64') : body.toString('utf8');
  const now = Date.now();
  return {
    resource: route.resource,
    path: url.pathname,
    httpMethod: route.method,
    headers,
    multiValueHeaders,
    queryStringParameters: Object.keys(query).length ? query : null,
    multiValueQueryStringParameters: Object.keys(multiQuery).length ? multiQuery : null,
    pathParameters,
    stageVariables: null,
    body: text,
    isBase64Encoded: binary,
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      authorizer: null,
      protocol: `HTTP/${req.httpVersion}`,
      httpMethod: route.method,
      identity: {
        accessKey: null,
        accountId: null,
        apiKey: null,
        apiKeyId: null,
        caller: null,
        clientCert: null,
        cognitoAuthenticationProvider: null,
        cognitoAuthenticationType: null,
        cognitoIdentityId: null,
        cognitoIdentityPoolId: null,
        principalOrgId: null,
        sourceIp: (req.socket.remoteAddress ?? '127.0.0.1').replace(/^::ffff:/, ''),
        user: null,
        userAgent: req.headers['user-agent'] ?? null,
        userArn: null,
      },
      path: `/${STAGE}${url.pathname}`,
      stage: STAGE,
      requestId: randomUUID(),
      extendedRequestId: randomUUID(),
      domainName: req.headers.host ?? 'localhost',
      requestTime: requestTime(now),
      requestTimeEpoch: now,
      resourceId: 'local',
      resourcePath: route.resource,
    },
  };
}

function writeResult(res: ServerResponse, result: APIGatewayProxyResult): void {
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(result.headers ?? {})) headers[k] = String(v);
  for (const [k, list] of Object.entries(result.multiValueHeaders ?? {})) headers[k] = list.map(String);
  const body = result.isBase64Encoded ? Buffer.from(result.body, 'base64') : Buffer.from(result.body ?? '', 'utf8');
  res.writeHead(result.statusCode, { ...headers, 'Content-Length': String(body.length) });
  res.end(body);
}

function writeProblem(res: ServerResponse, error: CodedError): void {
  writeResult(res, problemResponse(error, randomUUID()));
}

/** Reads the body up to the limit; undefined when it is larger (the rest is not read). */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      resolve(undefined);
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        resolve(undefined);
        req.pause();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
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
        const { match, allowed } = findRoute(options.routes, method, url.pathname);
        if (!match) {
          const error = allowed.length ? new MethodNotAllowedError(allowed) : new NotFoundError('No such route. See /docs for the API.');
          writeProblem(res, error);
          return done(statusOf(error.code));
        }
        const limit = options.maxBodyBytes ?? MAX_ADAPTER_BODY_BYTES;
        const body = await readBody(req, limit);
        if (body === undefined) {
          res.setHeader('Connection', 'close');
          writeProblem(res, new PayloadTooLargeError(limit));
          res.on('finish', () => req.destroy());
          return done(413);
        }
        const handler = await handlerFor(match.route);
        const event = toApiGatewayEvent(req, body, match.route, match.pathParameters, url);
        const result = await handler(event, lambdaContext({ functionName: match.route.functionName, timeoutMs: LAMBDA_TIMEOUT_MS }));
        writeResult(res, result);
        done(result.statusCode);
      } catch (error) {
        // A handler never throws (its error middleware answers); this is the adapter's own failure.
        console.error(`local adapter error: ${(error as Error).message}`);
        if (!res.headersSent) writeResult(res, problemResponse(new InternalError(), randomUUID()));
        done(500);
      }
    })();
  });
}
