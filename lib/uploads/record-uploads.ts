import { parseFileKey } from './file-key.js';
import type { UploadRecords } from './ports.js';

/** One object event as the object store reports it (S3 event notification, or the local S3's). */
export interface ObjectEvent {
  /** e.g. `ObjectCreated:Put`, `ObjectRemoved:Delete`, `LifecycleExpiration:Delete`. */
  eventName: string;
  /** The object key, already URL-decoded. */
  key: string;
  size: number;
  eventTime: string;
}

/**
 * Keeps the upload records in step with the invoice bucket: an object created under a fileKey
 * this service issues is recorded, one removed or expired is forgotten. Keys of any other shape
 * are ignored (the bucket holds invoices only, but a record must never vouch for a key that
 * validateFileKey would refuse). Every record is written before this resolves; a failure rejects,
 * so the event is delivered again (recording is idempotent: the same put, or the same delete).
 * Returns what was done, for the log.
 */
export async function applyObjectEvents(events: readonly ObjectEvent[], records: UploadRecords): Promise<{ recorded: number; forgotten: number; ignored: number }> {
  let recorded = 0;
  let forgotten = 0;
  let ignored = 0;
  await Promise.all(
    events.map(async (event) => {
      const parsed = parseFileKey(event.key);
      if (!parsed) {
        ignored++;
        return;
      }
      if (event.eventName.startsWith('ObjectCreated:')) {
        await records.record({ fileKey: event.key, companyId: parsed.companyId, size: event.size, uploadedAt: event.eventTime });
        recorded++;
      } else if (event.eventName.startsWith('ObjectRemoved:') || event.eventName.startsWith('LifecycleExpiration:')) {
        await records.forget(event.key);
        forgotten++;
      } else {
        ignored++;
      }
    }),
  );
  return { recorded, forgotten, ignored };
}
