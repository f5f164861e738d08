import { fileKeyProblem } from '../uploads/file-key.js';
import { UploadService } from '../uploads/upload-service.js';
import { config, type AppConfig } from '../runtime/config.js';
import { operationalLog } from '../runtime/logger.js';
import { DynamoCaseChangeStore } from './dynamodb/case-change-store.js';
import { DynamoCaseWriter } from './dynamodb/case-writer.js';
import { documentClient } from './dynamodb/dynamo-client.js';
import { DynamoIdempotencyStore } from './dynamodb/idempotency-store.js';
import { DynamoRecoveryStore } from './dynamodb/recovery-store.js';
import { DynamoReferenceAllocator } from './dynamodb/reference-allocator.js';
import { tableStores } from './dynamodb/stores.js';
import { S3InvoiceFileStore } from './s3/invoice-file-store.js';
import { DynamoUploadRecords } from './dynamodb/upload-records.js';
import { RecordedInvoiceFiles } from './recorded-invoice-files.js';
import { PresignedUploadSigner } from './s3/presigned-upload-signer.js';
import { cursorSealerOnce } from './secrets/cursor-secret.js';
import { s3Client } from './s3/s3-client.js';

/**
 * The composition root of a deployed (or `npm start`) process: every port bound to its DynamoDB
 * or S3 adapter, from the configuration read once at cold start. Each handler module in
 * `functions/` takes what it needs from here; tests build handlers with their own ports instead.
 */
export function tableAdapters(cfg: AppConfig = config()) {
  return tableStores(documentClient(cfg), cfg.tableName);
}

export function caseCreationAdapters(cfg: AppConfig = config()) {
  const client = documentClient(cfg);
  return {
    ...tableAdapters(cfg),
    writer: new DynamoCaseWriter(client, cfg.tableName),
    idempotency: new DynamoIdempotencyStore(client, cfg.tableName),
    references: new DynamoReferenceAllocator(client, cfg.tableName),
    files: new RecordedInvoiceFiles(new DynamoUploadRecords(client, cfg.tableName), new S3InvoiceFileStore(s3Client(cfg), cfg.bucketName)),
    fileKeyProblem,
    log: operationalLog,
    now: () => new Date(),
    idempotencyTtlSeconds: cfg.idempotencyTtlSeconds,
    claimHorizonSeconds: cfg.claimHorizonSeconds,
  };
}

/** The record-upload function: the upload records, written from the invoice bucket's events. */
export function uploadRecordAdapters(cfg: AppConfig = config()): DynamoUploadRecords {
  return new DynamoUploadRecords(documentClient(cfg), cfg.tableName);
}

export function uploadService(cfg: AppConfig = config()): UploadService {
  return new UploadService({ signer: new PresignedUploadSigner(s3Client(cfg), cfg.bucketName), ttlSeconds: cfg.uploadUrlTtlSeconds });
}

/** The case list: the table stores, and the cursor key read once per process (cold start). */
export function caseListAdapters(cfg: AppConfig = config()) {
  return { ...tableAdapters(cfg), cursors: cursorSealerOnce(cfg), now: () => new Date() };
}

/** The case changes (confirm, withdraw, verification, settling): the change store over the table, and the clock. */
export function caseChangeAdapters(cfg: AppConfig = config()) {
  return {
    ...tableAdapters(cfg),
    changes: { store: new DynamoCaseChangeStore(documentClient(cfg), cfg.tableName), now: () => new Date() },
  };
}

/** The payments routes: the recovery store, and for a payment's Idempotency-Key the batch's key store and settings. */
export function paymentAdapters(cfg: AppConfig = config()) {
  const client = documentClient(cfg);
  return {
    ...tableAdapters(cfg),
    payments: {
      store: new DynamoRecoveryStore(client, cfg.tableName),
      idempotency: new DynamoIdempotencyStore(client, cfg.tableName),
      idempotencyTtlSeconds: cfg.idempotencyTtlSeconds,
      claimHorizonSeconds: cfg.claimHorizonSeconds,
      log: operationalLog,
    },
  };
}

/** The back office's updates: the recovery store over the table, and the clock. */
export function recoveryAdapters(cfg: AppConfig = config()) {
  return { recovery: { store: new DynamoRecoveryStore(documentClient(cfg), cfg.tableName) }, now: () => new Date() };
}

/** The test-mode recovery helper: a partner route (its key checked), and the recovery store and clock. */
export function testRecoveryAdapters(cfg: AppConfig = config()) {
  return { ...tableAdapters(cfg), ...recoveryAdapters(cfg) };
}
