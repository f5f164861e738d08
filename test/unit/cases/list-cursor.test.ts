import { createCipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { CursorSealer } from '../../../lib/cases/list-cursor.js';
import { InvalidCursorError } from '../../../lib/errors.js';

/**
 * The cursor's content is checked after its tag, as a second line: a cursor sealed with our key
 * whose content is not the shape seal() writes is refused as unreadable, never half-read. These
 * cursors are sealed here by hand, as the format is written (version byte, 12-byte IV, AES-256-GCM
 * under the HKDF-derived key, 16-byte tag), since seal() only writes the right shape.
 */
const SECRET = Buffer.from('a list-cursor secret of thirty-two bytes or more, for tests', 'utf8');
const NOW = new Date('2026-11-29T12:00:00.000Z');
const EXPECTED = { companyId: 'cmp_cursorTester001', mode: 'live' as const, filters: 'status=DRAFT' };

function sealByHand(content: unknown): string {
  const key = Buffer.from(hkdfSync('sha256', SECRET, Buffer.alloc(0), 'partner-case-api list cursor v1', 32));
  const header = Buffer.from([1]);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(header);
  const body = Buffer.concat([cipher.update(JSON.stringify(content), 'utf8'), cipher.final()]);
  return Buffer.concat([header, iv, body, cipher.getAuthTag()]).toString('base64url');
}

const good = { c: EXPECTED.companyId, f: EXPECTED.filters, a: 'CASE#after', d: [0, 3], t: NOW.getTime() };

function reasonOpening(content: unknown, expected: { companyId: string; mode: 'live' | 'test'; filters: string } = EXPECTED) {
  try {
    new CursorSealer(SECRET).open(sealByHand(content), expected, NOW);
    return 'opened';
  } catch (error) {
    if (error instanceof InvalidCursorError) return error.reason;
    throw error;
  }
}

describe('a list cursor sealed with our key', () => {
  it('opens when it carries what seal() writes, and the hand-sealed form matches seal()', () => {
    expect(new CursorSealer(SECRET).open(sealByHand(good), EXPECTED, NOW)).toEqual({ after: 'CASE#after', doneShards: [0, 3] });
    const sealed = new CursorSealer(SECRET).seal({ ...EXPECTED, position: { after: 'CASE#x', doneShards: [] } }, NOW);
    expect(new CursorSealer(SECRET).open(sealed, EXPECTED, NOW)).toEqual({ after: 'CASE#x', doneShards: [] });
  });

  it('opens a test-mode cursor only for the test mode', () => {
    expect(reasonOpening({ ...good, m: 'test' }, { ...EXPECTED, mode: 'test' })).toBe('opened');
    expect(reasonOpening({ ...good, m: 'test' })).toBe('foreign');
  });

  it.each([
    ['a field it does not write', { ...good, x: 1 }],
    ['a mode other than test', { ...good, m: 'live' }],
    ['a mode that is null', { ...good, m: null }],
    ['filters that are not text', { ...good, f: ['status=DRAFT'] }],
    ['a shard that is text', { ...good, d: ['1'] }],
    ['a missing company', { ...good, c: undefined }],
    ['a shard that is negative', { ...good, d: [-1] }],
    ['a shard that is not whole', { ...good, d: [1.5] }],
    ['a shard list that is not a list', { ...good, d: 3 }],
    ['an issue time that is not whole', { ...good, t: NOW.getTime() + 0.5 }],
    ['a position that is not text', { ...good, a: 7 }],
    ['content that is not an object', [good]],
  ])('is refused as unreadable when its content has %s', (_, content) => {
    expect(reasonOpening(content)).toBe('unreadable');
  });
});
