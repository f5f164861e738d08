import type { CfnElement } from 'aws-cdk-lib';
import { RECORD_UPLOAD_DELIVERY } from '../../../infra/stack/upload-record-delivery.js';
import { REMOVAL_REMEMBERED_DAYS } from '../../../lib/uploads/record-uploads.js';
import { actionsOf, resourcesOfType, statementsOfFunction, synth, type Resource } from './synth.js';

/** The record-upload function's asynchronous invocations from S3: retries, the on-failure queue and their alarms. */
function logicalIdOf(element: CfnElement): string {
  const { stack } = synth();
  return stack.resolve(stack.getLogicalId(element)) as string;
}

const queueId = () => logicalIdOf(synth().stack.recordUploadDelivery.failedEvents.node.defaultChild as CfnElement);
const functionId = () => logicalIdOf(synth().stack.recordUpload.function.node.defaultChild as CfnElement);

function alarm(id: string): Resource {
  const found = Object.values(resourcesOfType(synth().template, 'AWS::CloudWatch::Alarm')).filter(
    (a) => a.Properties.AlarmName === `PartnerCaseApi-dev-${id}`,
  );
  if (found.length !== 1) throw new Error(`expected one alarm ${id}, found ${found.length}`);
  return found[0] as Resource;
}

describe('record-upload’s asynchronous invocations', () => {
  it('are retried twice for up to six hours, then sent to an SQS on-failure destination', () => {
    // The record-upload function's (the sweeper has one of its own: webhook-delivery.test.ts).
    const configs = Object.values(resourcesOfType(synth().template, 'AWS::Lambda::EventInvokeConfig')).filter(
      (c) => JSON.stringify(c.Properties.FunctionName) === JSON.stringify({ Ref: functionId() }),
    );
    expect(configs).toHaveLength(1);
    expect(configs[0]!.Properties).toMatchObject({
      FunctionName: { Ref: functionId() },
      MaximumRetryAttempts: 2,
      MaximumEventAgeInSeconds: 6 * 3600,
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [queueId(), 'Arn'] } } },
    });
  });

  it('go to a queue that is encrypted, TLS-only and keeps a failed event for 14 days', () => {
    const queue = resourcesOfType(synth().template, 'AWS::SQS::Queue')[queueId()];
    expect(queue?.Properties).toMatchObject({ SqsManagedSseEnabled: true, MessageRetentionPeriod: 14 * 86_400 });
    // Its own policy (the debtor verifier's queues have theirs).
    const policy = Object.values(resourcesOfType(synth().template, 'AWS::SQS::QueuePolicy')).find((p) =>
      JSON.stringify(p.Properties.Queues).includes(queueId()),
    )!;
    expect(policy.Properties.PolicyDocument).toMatchObject({
      Statement: [expect.objectContaining({ Effect: 'Deny', Action: 'sqs:*', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })],
    });
  });

  it('may send messages to that queue only', () => {
    const sqs = statementsOfFunction(synth(), 'RecordUpload').filter((s) => actionsOf(s).some((a) => a.startsWith('sqs:')));
    expect(sqs).toEqual([expect.objectContaining({ Effect: 'Allow', Resource: { 'Fn::GetAtt': [queueId(), 'Arn'] } })]);
    expect(actionsOf(sqs[0]!).sort()).toEqual(['sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:SendMessage']);
  });

  it('a removal is remembered longer than the latest a creation event can still arrive (retries, then the queue)', () => {
    const latestArrivalDays = RECORD_UPLOAD_DELIVERY.maxEventAgeHours / 24 + RECORD_UPLOAD_DELIVERY.queueRetentionDays;
    expect(latestArrivalDays).toBeLessThan(REMOVAL_REMEMBERED_DAYS);
  });

  it.each([
    ['RecordUploadErrors', 'AWS/Lambda', 'Errors'],
    ['RecordUploadEventsDropped', 'AWS/Lambda', 'AsyncEventsDropped'],
    ['RecordUploadEventsLost', 'AWS/Lambda', 'DestinationDeliveryFailures'],
  ])('%s pages at the first %s/%s of the record-upload function', (id, namespace, metric) => {
    expect(alarm(id).Properties).toMatchObject({
      Namespace: namespace,
      MetricName: metric,
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: functionId() } }],
      Statistic: 'Sum',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      EvaluationPeriods: 1,
    });
  });

  it('pages as soon as a failed event waits in the on-failure queue', () => {
    expect(alarm('RecordUploadFailedEventsWaiting').Properties).toMatchObject({
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [queueId(), 'QueueName'] } }],
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
  });
});
