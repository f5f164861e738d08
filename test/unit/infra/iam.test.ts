import { Match } from 'aws-cdk-lib/assertions';
import {
  PLATFORM_ACTIONS,
  actionsOf,
  actionsOfFunction,
  dataActions,
  resourcesOfType,
  statementsOfFunction,
  synth,
  type Statement,
} from './synth.js';

const FUNCTIONS = ['GetCase', 'CreateCases', 'CreateUpload'] as const;
const tableArn = { 'Fn::GetAtt': [Match.stringLikeRegexp('^DataStoresTable'), 'Arn'] };
const invoiceObjects = {
  'Fn::Join': ['', [{ 'Fn::GetAtt': [Match.stringLikeRegexp('^DataStoresInvoiceBucket'), 'Arn'] }, '/invoices/*']],
};

const KEY_USE_CONDITION = { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['KEY#*'] } };

function statementWithSid(statements: Statement[], sid: string): Statement {
  const found = statements.filter((s) => s.Sid === sid);
  expect(found).toHaveLength(1);
  return found[0] as Statement;
}

describe('least-privilege IAM', () => {
  const synthesised = synth();

  it('get-case may only read table items and record API-key use', () => {
    expect(dataActions(actionsOfFunction(synthesised, 'GetCase'))).toEqual(['dynamodb:GetItem', 'dynamodb:UpdateItem']);
    expect(actionsOfFunction(synthesised, 'GetCase')).toEqual(
      [...PLATFORM_ACTIONS, 'dynamodb:GetItem', 'dynamodb:UpdateItem'].sort(),
    );
  });

  it('create-upload may only authenticate and presign invoice PUTs', () => {
    expect(dataActions(actionsOfFunction(synthesised, 'CreateUpload'))).toEqual([
      'dynamodb:GetItem',
      'dynamodb:UpdateItem',
      's3:PutObject',
    ]);
    const put = statementWithSid(statementsOfFunction(synthesised, 'CreateUpload'), 'PresignInvoiceUploads');
    expect(put).toEqual({ Sid: 'PresignInvoiceUploads', Effect: 'Allow', Action: 's3:PutObject', Resource: expect.anything() });
    expect(Match.objectLike({ r: invoiceObjects }).test({ r: put.Resource }).isSuccess).toBe(true);
  });

  it('create-cases may only write to the table and HEAD invoice files', () => {
    expect(dataActions(actionsOfFunction(synthesised, 'CreateCases'))).toEqual([
      'dynamodb:ConditionCheckItem',
      'dynamodb:DeleteItem',
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
      's3:GetObject',
    ]);
    const statements = statementsOfFunction(synthesised, 'CreateCases');
    const head = statementWithSid(statements, 'CheckInvoiceUploads');
    expect(head.Action).toBe('s3:GetObject');
    expect(Match.objectLike({ r: invoiceObjects }).test({ r: head.Resource }).isSuccess).toBe(true);
    const write = statementWithSid(statements, 'WriteCases');
    expect(write.Condition).toBeUndefined();
    expect(Match.objectLike({ r: tableArn }).test({ r: write.Resource }).isSuccess).toBe(true);
  });

  it.each(FUNCTIONS)('%s authenticates with GetItem on the table and may update API-key items only', (id) => {
    const statements = statementsOfFunction(synthesised, id);
    const read = statementWithSid(statements, 'ReadTableItems');
    expect(read.Action).toBe('dynamodb:GetItem');
    expect(read.Condition).toBeUndefined();
    const keyUse = statementWithSid(statements, 'RecordApiKeyUse');
    expect(keyUse.Action).toBe('dynamodb:UpdateItem');
    expect(keyUse.Condition).toEqual(KEY_USE_CONDITION);
    for (const s of [read, keyUse]) expect(Match.objectLike({ r: tableArn }).test({ r: s.Resource }).isSuccess).toBe(true);
  });

  it('only create-cases may update items other than API keys', () => {
    for (const id of ['GetCase', 'CreateUpload'] as const) {
      const updates = statementsOfFunction(synthesised, id).filter((s) => actionsOf(s).includes('dynamodb:UpdateItem'));
      expect(updates.map((s) => s.Condition)).toEqual([KEY_USE_CONDITION]);
    }
  });

  it.each(FUNCTIONS)('%s holds no wildcard action, no index ARN and "*" only for X-Ray', (id) => {
    for (const statement of statementsOfFunction(synthesised, id)) {
      expect(statement.Effect).toBe('Allow');
      for (const action of actionsOf(statement)) expect(action).not.toContain('*');
      expect(JSON.stringify(statement.Resource)).not.toContain('/index');
      if (statement.Resource === '*') {
        expect(actionsOf(statement).sort()).toEqual(['xray:PutTelemetryRecords', 'xray:PutTraceSegments']);
      }
    }
  });

  it.each(FUNCTIONS)('%s writes logs only to its own log group', (id) => {
    const logs = statementsOfFunction(synthesised, id).filter((s) => actionsOf(s).some((a) => a.startsWith('logs:')));
    expect(logs).toHaveLength(1);
    expect(logs[0]?.Resource).toEqual({ 'Fn::GetAtt': [expect.stringMatching(new RegExp(`^${id}LogGroup`)), 'Arn'] });
  });

  it('function roles carry no managed policies and trust only Lambda', () => {
    const roles = Object.entries(resourcesOfType(synthesised.template, 'AWS::IAM::Role')).filter(([logicalId]) =>
      FUNCTIONS.some((id) => logicalId.startsWith(`${id}Role`)),
    );
    expect(roles).toHaveLength(3);
    for (const [, role] of roles) {
      expect(role.Properties.ManagedPolicyArns).toBeUndefined();
      expect(role.Properties.AssumeRolePolicyDocument).toEqual({
        Version: '2012-10-17',
        Statement: [{ Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' } }],
      });
    }
  });
});
