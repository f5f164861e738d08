/**
 * S3's `sequencer`: the order of the events of one object key. S3 delivers events at least once
 * and in any order; of two events on the same key, the one with the greater sequencer happened
 * later. Sequencers are hexadecimal strings of varying length, compared (S3's event message
 * documentation) by left-padding the shorter with zeros and then comparing lexicographically.
 *
 * The stored form is that padding done once: upper-case hex, left-padded to SEQUENCER_WIDTH, so
 * that a plain string comparison (DynamoDB's `<` in a condition expression) orders two sequencers
 * exactly as S3 defines it. S3's sequencers are about 18 digits; a longer one is refused rather
 * than cut.
 */
export const SEQUENCER_WIDTH = 64;

/**
 * The position of a removal whose event carries no sequencer: after every event there can be on
 * the key. Such a removal can then never be overtaken by an older creation delivered late; a
 * re-upload of the key is found by asking the object store (a removal never vouches).
 */
export const AFTER_EVERY_SEQUENCER = 'F'.repeat(SEQUENCER_WIDTH);

const HEX = new RegExp(`^[0-9A-Fa-f]{1,${SEQUENCER_WIDTH}}$`);

/** The comparable form of an S3 sequencer, or undefined when it is missing or not one. */
export function comparableSequencer(sequencer: unknown): string | undefined {
  if (typeof sequencer !== 'string' || !HEX.test(sequencer)) return undefined;
  return sequencer.toUpperCase().padStart(SEQUENCER_WIDTH, '0');
}
