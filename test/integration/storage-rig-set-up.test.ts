import { Readable } from 'node:stream';
import { createHttpHandler } from '../../lib/adapters/dynamodb/dynamo-client.js';
import { config } from '../../lib/runtime/config.js';
import { BenchFixtures, type RequestHandlerLike } from '../support/storage-rig/handlers.js';

/**
 * The storage rig's set-up (test/support/storage-rig: the round-trip depth tests and the bench
 * share it) against the local stores, with faults injected between the SDK and them.
 */
describe('the storage rig’s set-up', () => {
  it('a partner’s invoice upload that the local S3 answers with InternalError is sent again, as a partner’s SDK would, and the set-up goes on', async () => {
    const real = createHttpHandler();
    let failed = 0;
    let puts = 0;
    const backend = {
      handle: async (request: { method: string; path: string }, options?: { abortSignal?: AbortSignal }) => {
        if (request.method === 'PUT' && request.path.includes(config().bucketName)) {
          puts++;
          if (failed === 0) {
            failed++;
            const xml =
              '<?xml version="1.0" encoding="UTF-8"?><Error><Code>InternalError</Code><Message>We encountered an internal error. Please try again.</Message></Error>';
            return {
              response: {
                statusCode: 500,
                headers: { 'content-type': 'application/xml' },
                body: Readable.from([Buffer.from(xml)]),
              },
            };
          }
        }
        return real.handle(request as never, options);
      },
    } as unknown as RequestHandlerLike;
    try {
      const partner = await new BenchFixtures(config(), backend).partner(3);
      expect(partner.fileKeys).toHaveLength(3);
      expect(failed).toBe(1);
      // Three files, one of them sent twice (more only if s3rver itself failed one too).
      expect(puts).toBeGreaterThanOrEqual(4);
    } finally {
      real.destroy();
    }
  });
});
