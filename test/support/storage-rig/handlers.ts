import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { buildCreateCasesHandler } from '../../../functions/create-cases.js';
import { buildConfirmCasesHandler } from '../../../functions/confirm-cases.js';
import { buildApplyRecoveryUpdatesHandler } from '../../../functions/apply-recovery-updates.js';
import { DynamoRecoveryStore } from '../../../lib/adapters/dynamodb/recovery-store.js';
import { buildCreateUploadHandler } from '../../../functions/create-upload.js';
import { DynamoCaseChangeStore } from '../../../lib/adapters/dynamodb/case-change-store.js';
import { buildGetCaseHandler } from '../../../functions/get-case.js';
import { buildListCasesHandler } from '../../../functions/list-cases.js';
import { buildWithdrawCaseHandler } from '../../../functions/withdraw-case.js';
import { buildRecordPaymentHandler } from '../../../functions/record-payment.js';
import { AccountsService } from '../../../lib/accounts/accounts-service.js';
import type { AppConfig } from '../../../lib/runtime/config.js';
import { operationalLog } from '../../../lib/runtime/logger.js';
import { PresignedUploadSigner } from '../../../lib/adapters/s3/presigned-upload-signer.js';
import { DynamoUploadRecords } from '../../../lib/adapters/dynamodb/upload-records.js';
import { RecordedInvoiceFiles } from '../../../lib/adapters/recorded-invoice-files.js';
import { DynamoCaseWriter } from '../../../lib/adapters/dynamodb/case-writer.js';
import { createDocumentClient } from '../../../lib/adapters/dynamodb/dynamo-client.js';
import { DynamoIdempotencyStore } from '../../../lib/adapters/dynamodb/idempotency-store.js';
import { DynamoReferenceAllocator } from '../../../lib/adapters/dynamodb/reference-allocator.js';
import { tableStores } from '../../../lib/adapters/dynamodb/stores.js';
import { cursorSealerOnce } from '../../../lib/adapters/secrets/cursor-secret.js';
import { keys } from '../../../lib/adapters/dynamodb/table-keys.js';
import { fileKeyProblem, issueFileKey } from '../../../lib/uploads/file-key.js';
import { S3InvoiceFileStore } from '../../../lib/adapters/s3/invoice-file-store.js';
import { createS3Client } from '../../../lib/adapters/s3/s3-client.js';
import { UploadService } from '../../../lib/uploads/upload-service.js';
import { comparableSequencer } from '../../../lib/uploads/object-sequencer.js';
import { withRetries } from '../../../lib/adapters/retry.js';
import type { Handler } from './events.js';
import { StorageRecorder } from './recorder.js';

/**
 * The handlers wired exactly as in production (functions/*.ts), but over storage clients
 * built here: the production client factories (same HTTP settings, retries, checksum options) with
 * the recording middleware added. Loading this module loads functions/*.ts, which read the
 * configuration: set the environment first.
 */
export interface RecordedHandlers {
  recorder: StorageRecorder;
  ddb: DynamoDBDocumentClient;
  s3: S3Client;
  getCase: Handler;
  listCases: Handler;
  createCases: Handler;
  createUpload: Handler;
  withdrawCase: Handler;
  recordPayment: Handler;
  confirmCases: Handler;
  applyRecoveryUpdates: Handler;
}

/** The stand-in a client can be pointed at instead of the network (see memory-backend.ts). */
export interface RequestHandlerLike {
  handle(request: never, options?: never): Promise<unknown>;
}

/**
 * A DocumentClient and an S3Client made by the production factories (same HTTP settings, retries,
 * checksum options). With `backend`, their HTTP handler is swapped for the store stand-in:
 * the rest of the SDK pipeline is unchanged.
 */
export function storageClients(cfg: AppConfig, backend?: RequestHandlerLike): { ddb: DynamoDBDocumentClient; s3: S3Client } {
  const ddb = createDocumentClient(cfg);
  const s3 = createS3Client(cfg);
  if (backend) {
    for (const client of [ddb, s3]) {
      const config = client.config as unknown as { requestHandler: { destroy?: () => void } };
      config.requestHandler.destroy?.();
      config.requestHandler = backend as unknown as { destroy?: () => void };
    }
  }
  return { ddb, s3 };
}

export function recordedHandlers(cfg: AppConfig, backend?: RequestHandlerLike): RecordedHandlers {
  const recorder = new StorageRecorder();
  const { ddb, s3 } = storageClients(cfg, backend);
  // DynamoDBDocumentClient.from() shares the base client's middleware stack.
  recorder.attach(ddb.middlewareStack, 'dynamodb');
  recorder.attach(s3.middlewareStack, 's3');
  const stores = tableStores(ddb, cfg.tableName);
  const getCase = buildGetCaseHandler(stores);
  const listCases = buildListCasesHandler({ ...stores, cursors: cursorSealerOnce(cfg) });
  const createCases = buildCreateCasesHandler({
    keys: stores.keys,
    companies: stores.companies,
    writer: new DynamoCaseWriter(ddb, cfg.tableName),
    idempotency: new DynamoIdempotencyStore(ddb, cfg.tableName),
    references: new DynamoReferenceAllocator(ddb, cfg.tableName),
    files: new RecordedInvoiceFiles(new DynamoUploadRecords(ddb, cfg.tableName), new S3InvoiceFileStore(s3, cfg.bucketName)),
    fileKeyProblem,
    log: operationalLog,
    now: () => new Date(),
    idempotencyTtlSeconds: cfg.idempotencyTtlSeconds,
    claimHorizonSeconds: cfg.claimHorizonSeconds,
  });
  const createUpload = buildCreateUploadHandler({
    keys: stores.keys,
    uploads: new UploadService({ signer: new PresignedUploadSigner(s3, cfg.bucketName), ttlSeconds: cfg.uploadUrlTtlSeconds }),
  });
  const withdrawCase = buildWithdrawCaseHandler({
    keys: stores.keys,
    changes: { store: new DynamoCaseChangeStore(ddb, cfg.tableName), now: () => new Date() },
  });
  const recordPayment = buildRecordPaymentHandler({
    keys: stores.keys,
    payments: {
      store: new DynamoRecoveryStore(ddb, cfg.tableName),
      idempotency: new DynamoIdempotencyStore(ddb, cfg.tableName),
      idempotencyTtlSeconds: cfg.idempotencyTtlSeconds,
      claimHorizonSeconds: cfg.claimHorizonSeconds,
      log: operationalLog,
    },
  });
  const confirmCases = buildConfirmCasesHandler({
    changes: { store: new DynamoCaseChangeStore(ddb, cfg.tableName), now: () => new Date() },
  });
  const applyRecoveryUpdates = buildApplyRecoveryUpdatesHandler({
    recovery: { store: new DynamoRecoveryStore(ddb, cfg.tableName) },
    now: () => new Date(),
  });
  return {
    recorder,
    ddb,
    s3,
    withdrawCase: withdrawCase as unknown as Handler,
    recordPayment: recordPayment as unknown as Handler,
    confirmCases: confirmCases as unknown as Handler,
    applyRecoveryUpdates: applyRecoveryUpdates as unknown as Handler,
    getCase: getCase as unknown as Handler,
    listCases: listCases as unknown as Handler,
    createCases: createCases as unknown as Handler,
    createUpload: createUpload as unknown as Handler,
  };
}

/** A company with one read+write key and `fileCount` uploaded invoices, made without recording. */
export interface BenchPartner {
  companyId: string;
  keyId: string;
  apiKey: string;
  fileKeys: string[];
}

export class BenchFixtures {
  readonly ddb: DynamoDBDocumentClient;
  readonly s3: S3Client;

  constructor(
    private readonly cfg: AppConfig,
    backend?: RequestHandlerLike,
  ) {
    ({ ddb: this.ddb, s3: this.s3 } = storageClients(cfg, backend));
  }

  async partner(fileCount: number): Promise<BenchPartner> {
    const stores = tableStores(this.ddb, this.cfg.tableName);
    const accounts = new AccountsService(stores.companies, stores.keys);
    const company = await accounts.createCompany(`Bench Co ${Date.now()}`, false);
    const key = await accounts.createKey(company.companyId, ['cases:read', 'cases:write']);
    const body = Buffer.from('%PDF-1.4\n% benchmark invoice\n');
    const records = new DynamoUploadRecords(this.ddb, this.cfg.tableName);
    const fileKeys: string[] = [];
    for (let i = 0; i < fileCount; i += 20) {
      const chunk = Array.from({ length: Math.min(20, fileCount - i) }, () => issueFileKey(company.companyId, 'application/pdf'));
      await Promise.all(
        chunk.map(async (fileKey) => {
          // Under the retry layer, as a partner's SDK retries its upload: s3rver once answered one of twenty
          // concurrent PutObjects with InternalError, and the clients here make one attempt only.
          const put = new PutObjectCommand({
            Bucket: this.cfg.bucketName,
            Key: fileKey,
            Body: body,
            ContentType: 'application/pdf',
            ContentLength: body.length,
          });
          await withRetries((options) => this.s3.send(put, options));
          // What the bucket's ObjectCreated notification does (functions/record-upload.ts), done
          // here so the record is there before the first request, whatever the backend.
          await records.record({
            fileKey,
            companyId: company.companyId,
            size: body.length,
            uploadedAt: new Date().toISOString(),
            sequencer: comparableSequencer('1')!,
          });
        }),
      );
      fileKeys.push(...chunk);
    }
    return { companyId: company.companyId, keyId: key.keyId, apiKey: key.apiKey, fileKeys };
  }

  /**
   * Marks the key as used just now: the next requests within a minute skip the `lastUsedAt`
   * write (a warmed key, the steady state of a partner sending traffic).
   */
  async warmKey(keyId: string): Promise<void> {
    await this.ddb.send(
      new UpdateCommand({
        TableName: this.cfg.tableName,
        Key: keys.apiKey(keyId),
        UpdateExpression: 'SET lastUsedAt = :at',
        ExpressionAttributeValues: { ':at': new Date().toISOString() },
      }),
    );
  }

  /** Forgets the key's last use: the next request records it (first use, or a minute idle). */
  async coolKey(keyId: string): Promise<void> {
    await this.ddb.send(
      new UpdateCommand({ TableName: this.cfg.tableName, Key: keys.apiKey(keyId), UpdateExpression: 'REMOVE lastUsedAt' }),
    );
  }

  destroy(): void {
    this.ddb.destroy();
    this.s3.destroy();
  }
}
