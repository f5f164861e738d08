import { parentPort } from 'node:worker_threads';
import { bodyBytes, MemoryBackend } from '../../test/support/storage-rig/memory-backend.js';
import type { BackendReply, BackendRequest } from './remote-backend.js';

/**
 * The worker side of RemoteBackend: the in-process stand-in, serving the requests the main
 * thread forwards, on this thread's CPU.
 */
const backend = new MemoryBackend();
const port = parentPort!;

port.on('message', (request: BackendRequest) => {
  void (async () => {
    let reply: BackendReply;
    try {
      const { response, servedMs } = await backend.handle({
        method: request.method,
        path: request.path,
        headers: request.headers,
        body: request.body,
      });
      reply = {
        id: request.id,
        statusCode: response.statusCode,
        ...(response.reason ? { reason: response.reason } : {}),
        headers: response.headers,
        body: await bodyBytes(response.body),
        busyMs: servedMs,
      };
    } catch (error) {
      reply = { id: request.id, error: (error as Error).stack ?? String(error) };
    }
    // An exact-size copy, handed over rather than cloned.
    if (reply.error === undefined) {
      reply.body = new Uint8Array(reply.body);
      port.postMessage(reply, [reply.body.buffer as ArrayBuffer]);
    } else port.postMessage(reply);
  })();
});
