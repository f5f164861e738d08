import { lambdaRecord } from '../../../infra/local/stream-poller.js';

/**
 * The local stream poller reads GetRecords as JSON (infra/local/stream-poller.ts): what it hands a
 * consumer is the Lambda event's record, the images in the attribute-value JSON the Streams API sent.
 */
describe('a record read from the local stream', () => {
  it('reaches the consumer in the Lambda event’s shape: its images as sent, its time in whole epoch seconds', () => {
    const image = { pk: { S: 'EVENT#evt_1' }, sk: { S: 'EVENT' }, n: { N: '1.50' }, b: { B: 'AAE=' } };
    const wire = {
      eventID: 'e1',
      eventName: 'MODIFY',
      eventVersion: '1.1',
      dynamodb: {
        ApproximateCreationDateTime: 1764410000.75,
        Keys: { pk: image.pk, sk: image.sk },
        NewImage: image,
        OldImage: { ...image, n: { N: '1' } },
        SequenceNumber: '000042',
        SizeBytes: 120,
        StreamViewType: 'NEW_AND_OLD_IMAGES',
      },
    };
    // The wire's record as it was, with the event's source fields and the time in whole seconds.
    expect(lambdaRecord(wire, 'arn:aws:dynamodb:ddblocal:000000000000:table/t/stream/x', 'eu-west-2')).toEqual({
      ...wire,
      eventSource: 'aws:dynamodb',
      awsRegion: 'eu-west-2',
      eventSourceARN: 'arn:aws:dynamodb:ddblocal:000000000000:table/t/stream/x',
      dynamodb: { ...wire.dynamodb, ApproximateCreationDateTime: 1764410000 },
    });
  });

  it('has no OldImage for an insert, as the fan-out’s filter expects', () => {
    const record = lambdaRecord(
      { eventName: 'INSERT', dynamodb: { Keys: {}, NewImage: { pk: { S: 'x' } }, SequenceNumber: '1' } },
      'arn',
      'eu-west-2',
    );
    expect(record.dynamodb).not.toHaveProperty('OldImage');
    expect(record.eventVersion).toBe('1.1');
  });
});
