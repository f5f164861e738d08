import type { S3Event } from 'aws-lambda';
import { uploadRecordAdapters } from '../lib/adapters/production-adapters.js';
import { logger } from '../lib/runtime/logger.js';
import { applyObjectEvents, type ObjectEvent } from '../lib/uploads/record-uploads.js';
import type { UploadRecords } from '../lib/uploads/ports.js';

/**
 * The invoice bucket's object events (S3 event notification; locally the local S3's own events,
 * infra/local/stores.ts): records each invoice upload in the table, so batch creation confirms a
 * file with one read for the whole batch instead of a HEAD per file, and forgets a removed or
 * expired one. A failure rejects, so S3's asynchronous invocation delivers the event again.
 */
export function s3ObjectEvents(event: S3Event): ObjectEvent[] {
  return (event.Records ?? []).map((r) => ({
    eventName: r.eventName,
    // S3 URL-encodes the key in events (a space as "+"); issued fileKeys never need it, others are ignored.
    key: decodeURIComponent(r.s3.object.key.replace(/\+/g, ' ')),
    size: r.s3.object.size ?? 0,
    eventTime: r.eventTime,
  }));
}

export function buildRecordUploadHandler(records: UploadRecords) {
  return async (event: S3Event): Promise<void> => {
    const done = await applyObjectEvents(s3ObjectEvents(event), records);
    logger.debug('upload records updated', done);
  };
}

let production: ReturnType<typeof buildRecordUploadHandler> | undefined;
/** Built on the first event, so the local stack can load this module before its configuration exists. */
export const handler = (event: S3Event): Promise<void> => (production ??= buildRecordUploadHandler(uploadRecordAdapters()))(event);
