import { parseFileKey } from './file-key.js';
import { AFTER_EVERY_SEQUENCER, comparableSequencer } from './object-sequencer.js';
import type { UploadRecords } from './ports.js';

/** One object event as the object store reports it (S3 event notification, or the local S3's). */
export interface ObjectEvent {
  /** e.g. `ObjectCreated:Put`, `ObjectRemoved:Delete`, `LifecycleExpiration:Delete`. */
  eventName: string;
  /** The object key, already URL-decoded. */
  key: string;
  size: number;
  eventTime: string;
  /** S3's `sequencer` as sent (hex); absent on some event types. */
  sequencer?: string;
}

/**
 * How long a removal is remembered (the tombstone's time to live). It must outlast the latest a
 * creation event of the same key can still arrive: S3's asynchronous invocation retries it for at
 * most the function's maximum event age, and a failed one waits in the on-failure queue for at
 * most its retention before an operator replays it (infra: RECORD_UPLOAD_DELIVERY; a stack test
 * holds the sum below this). After it, the key has no record and is asked of the object store.
 */
export const REMOVAL_REMEMBERED_DAYS = 30;

export interface AppliedObjectEvents {
  recorded: number;
  removed: number;
  /** Events older than (or the same as) what the key's record already holds: nothing written. */
  stale: number;
  ignored: number;
}

/**
 * Keeps the upload records in step with the invoice bucket: an object created under a fileKey
 * this service issues is recorded as present, one removed or expired as a tombstone. Each write
 * lands only if its event is newer than the record's (S3's sequencer), so S3's at-least-once,
 * unordered delivery leaves every record at its key's latest event. Keys of any other shape are
 * ignored (the bucket holds invoices only, but a record must never vouch for a key that
 * validateFileKey would refuse), and so is a creation without a sequencer, which could not be
 * ordered against a removal: its key is asked of the object store instead. Every record is written
 * before this resolves; a failure rejects, so the event is delivered again.
 * Returns what was done, for the log.
 */
export async function applyObjectEvents(events: readonly ObjectEvent[], records: UploadRecords): Promise<AppliedObjectEvents> {
  const done: AppliedObjectEvents = { recorded: 0, removed: 0, stale: 0, ignored: 0 };
  await Promise.all(
    events.map(async (event) => {
      const parsed = parseFileKey(event.key);
      const sequencer = comparableSequencer(event.sequencer);
      if (!parsed) {
        done.ignored++;
      } else if (event.eventName.startsWith('ObjectCreated:')) {
        if (sequencer === undefined) {
          done.ignored++;
          return;
        }
        const written = await records.record({
          fileKey: event.key,
          companyId: parsed.companyId,
          size: event.size,
          uploadedAt: event.eventTime,
          sequencer,
        });
        done[written ? 'recorded' : 'stale']++;
      } else if (event.eventName.startsWith('ObjectRemoved:') || event.eventName.startsWith('LifecycleExpiration:')) {
        // A removal S3 did not place in the key's history is put after all of it: a tombstone
        // that cannot be overtaken is safe, since a tombstone never vouches.
        const removal = {
          fileKey: event.key,
          companyId: parsed.companyId,
          removedAt: event.eventTime,
          sequencer: sequencer ?? AFTER_EVERY_SEQUENCER,
        };
        done[(await records.recordRemoval(removal)) ? 'removed' : 'stale']++;
      } else {
        done.ignored++;
      }
    }),
  );
  return done;
}
