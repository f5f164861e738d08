import type { DynamoDBRecord } from 'aws-lambda';
import { FAN_OUT_STREAM, VERIFIER_STREAM } from '../../../infra/contract/stream-consumers.js';
import {
  assertDynamoDbStreamFilterPattern,
  assertSupportedFilterPattern,
  matchesFilterPattern,
} from '../../../infra/local/match-filter-pattern.js';
import { startStreamPoller } from '../../../infra/local/stream-poller.js';

/**
 * The local stream pollers drop what the stack's event source mappings drop: the same patterns
 * (infra/contract/stream-consumers.ts; webhook-delivery.test.ts and debtor-verifier.test.ts pin them
 * in the synthesised template), evaluated as Lambda's event filtering evaluates them.
 */
function record(eventName: 'INSERT' | 'MODIFY' | 'REMOVE', type?: Record<string, string>): DynamoDBRecord {
  const keys = { pk: { S: 'EVENT#evt_1' }, sk: { S: 'EVENT' } };
  const image = { ...keys, ...(type ? { type } : {}) };
  return {
    eventID: '1',
    eventName,
    eventSource: 'aws:dynamodb',
    dynamodb: {
      Keys: keys,
      SequenceNumber: '100',
      // The table's stream carries both images: a MODIFY and a REMOVE have the item as it was.
      StreamViewType: 'NEW_AND_OLD_IMAGES',
      ...(eventName === 'REMOVE' ? {} : { NewImage: image }),
      ...(eventName === 'INSERT' ? {} : { OldImage: image }),
    },
  } as DynamoDBRecord;
}

describe('the local stream pollers’ filtering', () => {
  it.each([
    ['an event item inserted', record('INSERT', { S: 'EVENT' }), true, false],
    ['a case item inserted', record('INSERT', { S: 'CASE' }), false, true],
    ['an event item changed', record('MODIFY', { S: 'EVENT' }), false, false],
    ['a case item changed', record('MODIFY', { S: 'CASE' }), false, false],
    ['an item removed (no new image)', record('REMOVE'), false, false],
    ['an item inserted without a type', record('INSERT'), false, false],
    ['an item whose type is a number', record('INSERT', { N: '1' }), false, false],
    ['an item of another type inserted', record('INSERT', { S: 'EVENT_OUTSIDE_THE_LOCAL_ENGINES' }), false, false],
  ])('%s: handed to the webhook fan-out %p, to the debtor verifier %p', (_name, r, fanOut, verifier) => {
    expect(matchesFilterPattern(FAN_OUT_STREAM.filterPattern, r)).toBe(fanOut);
    expect(matchesFilterPattern(VERIFIER_STREAM.filterPattern, r)).toBe(verifier);
  });

  it('filters on the record\u2019s dynamodb key only, the one key AWS filters a DynamoDB stream on', () => {
    for (const pattern of [FAN_OUT_STREAM.filterPattern, VERIFIER_STREAM.filterPattern]) {
      expect(Object.keys(pattern)).toEqual(['dynamodb']);
      expect(() => assertDynamoDbStreamFilterPattern(pattern)).not.toThrow();
    }
  });

  it('a local stream poller refuses at start a pattern with a key outside dynamodb, as AWS ignores such keys', async () => {
    const start = (filterPattern: object) =>
      startStreamPoller({
        endpoint: 'http://127.0.0.1:9',
        region: 'eu-west-2',
        tableName: 'unused',
        handler: async () => {},
        filterPattern,
      });
    await expect(start({ eventName: ['INSERT'], dynamodb: { NewImage: { type: { S: ['EVENT'] } } } })).rejects.toThrow(
      /filter pattern eventName: a DynamoDB event source mapping filters on the "dynamodb" key only/,
    );
    await expect(start({ awsRegion: ['eu-west-2'] })).rejects.toThrow(/filter pattern awsRegion/);
  });

  it('exists tests leaf values as Lambda does: an image object never counts as present', () => {
    const modify = record('MODIFY', { S: 'EVENT' });
    const insert = record('INSERT', { S: 'EVENT' });
    expect(matchesFilterPattern({ dynamodb: { OldImage: { pk: { S: [{ exists: false }] } } } }, insert)).toBe(true);
    expect(matchesFilterPattern({ dynamodb: { OldImage: { pk: { S: [{ exists: false }] } } } }, modify)).toBe(false);
    expect(matchesFilterPattern({ dynamodb: { OldImage: { pk: { S: [{ exists: true }] } } } }, modify)).toBe(true);
    // The trap: OldImage itself is an object, not a leaf, so exists:false on it matches a MODIFY too.
    expect(matchesFilterPattern({ dynamodb: { OldImage: [{ exists: false }] } }, modify)).toBe(true);
    expect(matchesFilterPattern({ dynamodb: { OldImage: [{ exists: true }] } }, modify)).toBe(false);
  });

  it('a list matches any one of its values, and a field that is a list when one of its elements does', () => {
    expect(matchesFilterPattern({ eventName: ['INSERT', 'MODIFY'] }, record('MODIFY'))).toBe(true);
    expect(matchesFilterPattern({ tags: ['b'] }, { tags: ['a', 'b'] })).toBe(true);
    expect(matchesFilterPattern({ tags: ['c'] }, { tags: ['a', 'b'] })).toBe(false);
  });

  it('refuses, when a poller starts, a rule it cannot evaluate as Lambda does, rather than guess', () => {
    for (const pattern of [FAN_OUT_STREAM.filterPattern, VERIFIER_STREAM.filterPattern])
      expect(() => assertSupportedFilterPattern(pattern)).not.toThrow();
    expect(() => assertSupportedFilterPattern({ eventName: [{ prefix: 'IN' }] })).toThrow(/eventName.*only lists of exact values/);
    expect(() => assertSupportedFilterPattern({ dynamodb: { OldImage: { pk: { S: [{ exists: 'no' }] } } } })).toThrow(
      /only lists of exact values/,
    );
    expect(() => assertSupportedFilterPattern({ dynamodb: { NewImage: { type: { S: [{ 'anything-but': 'CASE' }] } } } })).toThrow(
      /dynamodb\.NewImage\.type\.S/,
    );
    expect(() => assertSupportedFilterPattern({ eventName: 'INSERT' })).toThrow(/a rule is a list of values or a nested pattern/);
    expect(() => assertSupportedFilterPattern({ eventName: [] })).toThrow(/only lists of exact values/);
  });
});
