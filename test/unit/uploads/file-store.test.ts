import { S3ServiceException, type S3Client } from '@aws-sdk/client-s3';
import { S3InvoiceFileStore } from '../../../lib/adapters/s3/invoice-file-store.js';

function s3Error(name: string, status: number): S3ServiceException {
  return new S3ServiceException({ name, $fault: status >= 500 ? 'server' : 'client', $metadata: { httpStatusCode: status } });
}

function clientThat(outcome: () => Promise<unknown>): S3Client {
  return { send: outcome } as unknown as S3Client;
}

describe('checking that an invoice was uploaded', () => {
  it('says yes when S3 has the object', async () => {
    await expect(
      new S3InvoiceFileStore(
        clientThat(async () => ({})),
        'b',
      ).exists('k'),
    ).resolves.toBe(true);
  });

  it.each([
    ['404 NotFound', s3Error('NotFound', 404)],
    ['NoSuchKey', s3Error('NoSuchKey', 404)],
  ])('says no when S3 answers %s', async (_name, error) => {
    await expect(
      new S3InvoiceFileStore(
        clientThat(() => Promise.reject(error)),
        'b',
      ).exists('k'),
    ).resolves.toBe(false);
  });

  it('never reads a 403 as "not uploaded": with s3:ListBucket granted, it is a permissions or KMS failure', async () => {
    const forbidden = s3Error('Forbidden', 403);
    await expect(
      new S3InvoiceFileStore(
        clientThat(() => Promise.reject(forbidden)),
        'b',
      ).exists('k'),
    ).rejects.toBe(forbidden);
  });

  it.each([
    ['a 500', s3Error('InternalError', 500)],
    ['a 503 SlowDown', s3Error('SlowDown', 503)],
    ['a network failure', Object.assign(new Error('socket hang up'), { name: 'TimeoutError' })],
  ])('retries and then fails loudly on %s instead of claiming the file is missing', async (_name, error) => {
    let calls = 0;
    const store = new S3InvoiceFileStore(
      clientThat(() => {
        calls++;
        return Promise.reject(error);
      }),
      'b',
    );
    await expect(store.exists('k')).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE', cause: error });
    expect(calls).toBe(5);
  });
});
