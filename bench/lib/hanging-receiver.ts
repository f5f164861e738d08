import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * A webhook receiver on loopback that accepts every connection, reads the request and never
 * answers: the sender waits out its 10 s timeout on every attempt. `requests` counts the requests
 * whose headers arrived, so a bench can say how much of the hanging tenant's work reached it.
 * `close` destroys the connections still held, so attempts in flight end at once.
 */
export interface HangingReceiver {
  url: string;
  readonly requests: number;
  close(): Promise<void>;
}

export async function startHangingReceiver(): Promise<HangingReceiver> {
  let requests = 0;
  const sockets = new Set<Socket>();
  const server = http.createServer((req) => {
    requests++;
    req.resume();
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    get requests() {
      return requests;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
