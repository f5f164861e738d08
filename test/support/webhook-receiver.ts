import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';

/** One request a test receiver got: what arrived on the wire. */
export interface ReceivedRequest {
  method: string;
  path: string;
  /** Header names in lower case, values as sent (Node joins repeated ones). */
  headers: Record<string, string>;
  /** The raw header names in the order sent. */
  rawHeaderNames: string[];
  body: string;
  /** The TLS server name the client asked for (SNI), on an https receiver. */
  servername?: string;
}

export type ReceiverHandler = (request: ReceivedRequest, response: http.ServerResponse) => void;

export interface WebhookReceiver {
  url: string;
  port: number;
  received: ReceivedRequest[];
  /** Connections the receiver saw open, answered or not. */
  connections: number;
  close(): Promise<void>;
}

/**
 * A webhook receiver on a loopback address for the sender's tests: records every request and
 * answers with the handler (200 and an empty body by default). `port` lets two receivers share a
 * port on two loopback addresses; `tls` makes it an https receiver with the given certificate.
 */
export async function startWebhookReceiver(
  options: { host?: string; port?: number; handler?: ReceiverHandler; tls?: { key: string; cert: string } } = {},
): Promise<WebhookReceiver> {
  const host = options.host ?? '127.0.0.1';
  const handler: ReceiverHandler = options.handler ?? ((_req, res) => res.writeHead(200).end());
  const received: ReceivedRequest[] = [];
  const listener = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers)) headers[name] = Array.isArray(value) ? value.join(', ') : String(value);
      const servername = (req.socket as Partial<TLSSocket>).servername;
      const request: ReceivedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers,
        rawHeaderNames: req.rawHeaders.filter((_, i) => i % 2 === 0),
        body: Buffer.concat(chunks).toString('utf8'),
        ...(typeof servername === 'string' ? { servername } : {}),
      };
      received.push(request);
      handler(request, res);
    });
  };
  const server = options.tls ? https.createServer({ key: options.tls.key, cert: options.tls.cert }, listener) : http.createServer(listener);
  const state = { connections: 0 };
  server.on(options.tls ? 'secureConnection' : 'connection', () => state.connections++);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `${options.tls ? 'https' : 'http'}://${host}:${port}`,
    port,
    received,
    get connections() {
      return state.connections;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
