import type { CfnElement } from 'aws-cdk-lib';
import { VERIFIER_CASE_ATTRIBUTES, VERIFIER_RETRY_QUEUE, VERIFIER_STREAM } from '../../../infra/stack/debtor-verifier.js';
import { actionsOf, resourcesOfType, synth, type Resource, type Statement } from './synth.js';

/** The debtor verifier in the stack: its two event sources, queues, alarms, secret and rights. */
function logicalIdOf(element: CfnElement): string {
  const { stack } = synth();
  return stack.resolve(stack.getLogicalId(element)) as string;
}

const verifier = () => synth().stack.debtorVerifier;
const functionId = () => logicalIdOf(verifier().worker.function.node.defaultChild as CfnElement);

function mappings(): Resource[] {
  return Object.values(resourcesOfType(synth().template, 'AWS::Lambda::EventSourceMapping')).filter(
    (m) => (m.Properties.FunctionName as { Ref: string }).Ref === functionId(),
  );
}

function alarm(id: string): Resource {
  const found = Object.values(resourcesOfType(synth().template, 'AWS::CloudWatch::Alarm')).filter(
    (a) => a.Properties.AlarmName === `PartnerCaseApi-dev-${id}`,
  );
  if (found.length !== 1) throw new Error(`expected one alarm ${id}, found ${found.length}`);
  return found[0] as Resource;
}

function workerStatements(): Statement[] {
  const { stack, template } = synth();
  const roleId = stack.resolve(stack.getLogicalId(verifier().worker.role.node.defaultChild as CfnElement)) as string;
  return Object.values(resourcesOfType(template, 'AWS::IAM::Policy'))
    .filter((p) => (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === roleId))
    .flatMap((p) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
}

describe('the debtor verifier', () => {
  it('streams the table with both images', () => {
    const table = Object.values(resourcesOfType(synth().template, 'AWS::DynamoDB::Table'))[0]!;
    expect(table.Properties.StreamSpecification).toEqual({ StreamViewType: 'NEW_AND_OLD_IMAGES' });
  });

  it('reads only INSERTs of case items from the stream, in batches, bisecting, with partial failures, bounded retries and age, and an on-failure queue', () => {
    const stream = mappings().find(
      (m) => m.Properties.EventSourceArn && JSON.stringify(m.Properties.EventSourceArn).includes('StreamArn'),
    )!;
    expect(stream.Properties).toMatchObject({
      BatchSize: VERIFIER_STREAM.batchSize,
      BisectBatchOnFunctionError: true,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      MaximumRetryAttempts: VERIFIER_STREAM.retryAttempts,
      MaximumRecordAgeInSeconds: VERIFIER_STREAM.maxRecordAgeHours * 3600,
      StartingPosition: 'TRIM_HORIZON',
      DestinationConfig: {
        OnFailure: { Destination: { 'Fn::GetAtt': [logicalIdOf(verifier().failedStreamRecords.node.defaultChild as CfnElement), 'Arn'] } },
      },
    });
    const filters = (stream.Properties.FilterCriteria as { Filters: { Pattern: string }[] }).Filters.map((f) => JSON.parse(f.Pattern));
    // INSERTs (no old image) of case items, on the dynamodb key only (the one key AWS filters a DynamoDB stream on).
    expect(filters).toEqual([{ dynamodb: { OldImage: { pk: { S: [{ exists: false }] } }, NewImage: { type: { S: ['CASE'] } } } }]);
  });

  it('consumes its retry queue with partial batch failures; the queue has a dead-letter queue after 5 receives', () => {
    const queueMapping = mappings().find((m) =>
      JSON.stringify(m.Properties.EventSourceArn).includes(logicalIdOf(verifier().retryQueue.node.defaultChild as CfnElement)),
    )!;
    expect(queueMapping.Properties).toMatchObject({
      BatchSize: VERIFIER_RETRY_QUEUE.batchSize,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    const queue = resourcesOfType(synth().template, 'AWS::SQS::Queue')[logicalIdOf(verifier().retryQueue.node.defaultChild as CfnElement)]!;
    expect(queue.Properties.RedrivePolicy).toMatchObject({ maxReceiveCount: 5 });
  });

  it('pages on a case still PENDING after 24 h, on failed stream records and on retry dead letters', () => {
    expect(alarm('DebtorVerificationExhausted').Properties).toMatchObject({
      MetricName: 'DebtorVerificationExhausted',
      Namespace: 'PartnerCaseApi',
      Threshold: 1,
    });
    expect(alarm('DebtorVerifierFailedStreamRecords').Properties).toMatchObject({
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Threshold: 1,
    });
    expect(alarm('DebtorVerifierRetryDeadLetters').Properties).toMatchObject({
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Threshold: 1,
    });
  });

  it('may update a case only in what verification changes, put events, use the registry items, read its key and send to its queue', () => {
    const statements = workerStatements();
    const bySid = (sid: string) => statements.find((s) => s.Sid === sid);
    expect(bySid('ChangeCaseVerification')).toMatchObject({
      Action: 'dynamodb:UpdateItem',
      Condition: {
        'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['CASE#*'] },
        'ForAllValues:StringEquals': { 'dynamodb:Attributes': [...VERIFIER_CASE_ATTRIBUTES] },
      },
    });
    expect(bySid('PutCaseEvents')?.Condition).toMatchObject({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['EVENT#*'] } });
    expect(bySid('NeverDeleteOrCreateCases')).toMatchObject({ Effect: 'Deny' });
    const allowed = new Set(statements.filter((s) => s.Effect === 'Allow').flatMap(actionsOf));
    for (const action of ['dynamodb:DeleteItem', 'dynamodb:Query', 'dynamodb:Scan', 'dynamodb:BatchWriteItem', 's3:PutObject'])
      expect(allowed.has(action)).toBe(false);
    expect(allowed.has('secretsmanager:GetSecretValue')).toBe(true);
    expect(allowed.has('sqs:SendMessage')).toBe(true);
    const env = (
      resourcesOfType(synth().template, 'AWS::Lambda::Function')[functionId()]!.Properties.Environment as {
        Variables: Record<string, unknown>;
      }
    ).Variables;
    expect(Object.keys(env)).toEqual(expect.arrayContaining(['VERIFICATION_RETRY_QUEUE_URL', 'COMPANIES_HOUSE_API_KEY_SECRET']));
  });

  it('names in the stack outputs what npm run admin -- case reverify and webhook redeliver need beside the table', () => {
    const { stack, template } = synth();
    const outputs = template.findOutputs('*') as Record<string, { Value: unknown }>;
    const ref = (element: CfnElement) => ({ Ref: stack.resolve(stack.getLogicalId(element)) as string });
    expect(outputs.VerificationRetryQueueUrl?.Value).toEqual(ref(verifier().retryQueue.node.defaultChild as CfnElement));
    expect(outputs.CompaniesHouseApiKeySecret?.Value).toEqual(ref(verifier().registryKey.node.defaultChild as CfnElement));
    expect(outputs.WebhookDeliveryQueueUrl?.Value).toEqual(ref(stack.webhookDelivery.fastLane.node.defaultChild as CfnElement));
    expect(outputs.WebhookTestDeliveryQueueUrl?.Value).toEqual(ref(stack.webhookDelivery.testFastLane.node.defaultChild as CfnElement));
  });
});
