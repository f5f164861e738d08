import type { S3Event } from 'aws-lambda';
import { uploadRecordAdapters } from '../lib/adapters/production-adapters.js';
import { logger } from '../lib/runtime/logger.js';
import { applyObjectEvents, type ObjectEvent } from '../lib/uploads/record-uploads.js';
import type { UploadRecords } from '../lib/uploads/ports.js';

/**
 * The invoice bucket's object events (S3 event notification; locally the local S3's own events,
 * infra/local/stores.ts): records each invoice upload in the table, so batch creation confirms a
 * file with one read for the whole batch instead of a HEAD per file, and marks a removed or
 * expired one with a tombstone; S3's sequencer orders the events of a key. A failure rejects, so
 * S3's asynchronous invocation delivers the event again (and, once its retries are spent, sends it
 * to the on-failure queue: infra/partner-case-api-stack.ts).
 */
export function s3ObjectEvents(event: S3Event): ObjectEvent[] {
  return (event.Records ?? []).map((r) => ({
    eventName: r.eventName,
    // S3 URL-encodes the key in events (a space as "+"); issued fileKeys never need it, others are ignored.
    key: decodeURIComponent(r.s3.object.key.replace(/\+/g, ' ')),
    size: r.s3.object.size ?? 0,
    eventTime: r.eventTime,
    // The order of this key's events (S3 delivers them at least once and in any order). Typed as
    // always present, but S3 sends it only with creations and removals.
    sequencer: r.s3.object.sequencer as string | undefined,
  }));
}

export function buildRecordUploadHandler(records: UploadRecords) {
  return async (event: S3Event): Promise<void> => {
    const done = await applyObjectEvents(s3ObjectEvents(event), records);
    logger.debug('upload records updated', { ...done });
  };
}

let production: ReturnType<typeof buildRecordUploadHandler> | undefined;
/** Built on the first event, so the local stack can load this module before its configuration exists. */
export const handler = (event: S3Event): Promise<void> => (production ??= buildRecordUploadHandler(uploadRecordAdapters()))(event);
