import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import {
  DEFAULT_STACK_CONFIG,
  DEFAULT_STACK_NAME,
  LOG_RETENTION_DAYS,
  readStackConfig,
  STAGES,
} from '../../../infra/contract/stack-config.js';
import { cdkJsonContext, TEST_PROD_STAGE } from './synth.js';

const DEV = { account: '111111111111', region: 'eu-west-2' };
const stages = { dev: DEV, prod: TEST_PROD_STAGE };
const fromContext = (context: Record<string, unknown>) =>
  readStackConfig({ tryGetContext: (key) => ({ stage: 'dev', stages, ...context })[key] });

describe('stages', () => {
  it('a synth without -c stage fails, naming the allowed values', () => {
    expect(() => readStackConfig({ tryGetContext: (key) => ({ stages })[key as 'stages'] })).toThrow(
      'Context "stage" is required: pass -c stage=dev or -c stage=prod (allowed values: dev, prod).',
    );
  });

  it.each(['production', 'Dev', 'test'])('refuses stage %p, naming the allowed values', (stage) => {
    expect(() => fromContext({ stage })).toThrow(/"stage" must be one of dev, prod/);
  });

  it('dev and prod are the only stages', () => {
    expect([...STAGES]).toEqual(['dev', 'prod']);
  });

  it('each stage is pinned to the account and region of its cdk.json entry', () => {
    expect(fromContext({}).target).toEqual(DEV);
    expect(fromContext({ stage: 'prod', alarmEmail: 'oncall@example.com' }).target).toEqual(TEST_PROD_STAGE);
  });

  it('a stage without an entry, or with a malformed account or region, fails before anything is built', () => {
    expect(() => readStackConfig({ tryGetContext: (key) => ({ stage: 'prod', stages: { dev: DEV }, alarmEmail: 'a@b.co' })[key] })).toThrow(
      /"stages.prod" \(cdk.json\) is missing/,
    );
    expect(() => fromContext({ stages: { dev: { ...DEV, account: 111111111111 } } })).toThrow(
      /"account" must be a 12-digit AWS account id/,
    );
    expect(() => fromContext({ stages: { dev: { ...DEV, region: 'London' } } })).toThrow(/"region" must be an AWS region/);
    expect(() => fromContext({ stages: { dev: { ...DEV, waf: false } } })).toThrow(/may only hold .*unknown: waf/);
  });

  it('the stack name carries the stage, and the API Gateway stage is named after it', () => {
    expect(fromContext({})).toMatchObject({ stackName: `${DEFAULT_STACK_NAME}-dev`, stageName: 'dev' });
    expect(fromContext({ stackName: 'PartnerCaseApiAlice' })).toMatchObject({ stackName: 'PartnerCaseApiAlice-dev' });
    expect(fromContext({ stage: 'prod', alarmEmail: 'oncall@example.com' })).toMatchObject({
      stackName: `${DEFAULT_STACK_NAME}-prod`,
      stageName: 'prod',
    });
  });

  it('only prod is termination-protected', () => {
    expect(fromContext({}).terminationProtection).toBe(false);
    expect(fromContext({ stage: 'prod', alarmEmail: 'oncall@example.com' }).terminationProtection).toBe(true);
  });

  it('prod cannot be synthesised without someone to receive its alarms', () => {
    expect(() => fromContext({ stage: 'prod' })).toThrow(/"alarmEmail" is required for stage prod/);
    expect(fromContext({}).alarmEmail).toBeUndefined();
  });

  it('the alarm subscriber and custom domain may be pinned per stage; -c takes precedence', () => {
    const pinned = { ...TEST_PROD_STAGE, alarmEmail: 'oncall@example.com' };
    expect(fromContext({ stage: 'prod', stages: { prod: pinned } }).alarmEmail).toBe('oncall@example.com');
    expect(fromContext({ stage: 'prod', stages: { prod: pinned }, alarmEmail: 'other@example.com' }).alarmEmail).toBe('other@example.com');
  });

  it('a custom domain needs its certificate, in the stage region', () => {
    const certificateArn = 'arn:aws:acm:eu-west-2:111111111111:certificate/0f3a8c1e-1234-4abc-9def-123456789abc';
    expect(fromContext({ domainName: 'api.example.com', certificateArn }).customDomain).toEqual({
      domainName: 'api.example.com',
      certificateArn,
    });
    expect(() => fromContext({ domainName: 'api.example.com' })).toThrow(/"domainName" and "certificateArn" go together/);
    expect(() => fromContext({ domainName: 'api.example.com', certificateArn: certificateArn.replace('eu-west-2', 'us-east-1') })).toThrow(
      /stage's region eu-west-2/,
    );
    expect(() => fromContext({ domainName: 'API.Example.com', certificateArn })).toThrow(/"domainName"/);
  });
});

describe('stack configuration from CDK context', () => {
  it('uses the documented defaults when nothing else is set', () => {
    expect(fromContext({})).toMatchObject(DEFAULT_STACK_CONFIG);
  });

  it('cdk.json repeats exactly the built-in defaults, and pins dev', () => {
    const context = cdkJsonContext();
    const ours = Object.fromEntries(
      Object.keys(DEFAULT_STACK_CONFIG)
        .filter((k) => k in context)
        .map((k) => [k, context[k]]),
    );
    const defaults = Object.fromEntries(Object.entries(DEFAULT_STACK_CONFIG).filter(([, value]) => value !== undefined));
    expect(ours).toEqual(defaults);
    expect(context.stackName).toBe(DEFAULT_STACK_NAME);
    expect(context).not.toHaveProperty('stage');
    expect(readStackConfig({ tryGetContext: (key) => ({ ...context, stage: 'dev' })[key] })).toMatchObject({
      ...DEFAULT_STACK_CONFIG,
      stage: 'dev',
      target: { account: expect.stringMatching(/^\d{12}$/), region: 'eu-west-2' },
    });
  });

  it('reads command-line strings as numbers and booleans', () => {
    const config = fromContext({
      waf: 'false',
      throttleRate: '12.5',
      throttleBurst: '25',
      invoiceExpirationDays: '3650',
      alarmEmail: 'ops@example.com',
    });
    expect(config).toMatchObject({
      waf: false,
      throttleRate: 12.5,
      throttleBurst: 25,
      invoiceExpirationDays: 3650,
      alarmEmail: 'ops@example.com',
    });
  });

  it.each([
    [{ waf: 'no' }, 'waf'],
    [{ throttleBurst: '1.5' }, 'throttleBurst'],
    [{ throttleRate: '100', throttleBurst: '10' }, 'throttleBurst'],
    [{ uploadUrlTtlSeconds: 7200 }, 'uploadUrlTtlSeconds'],
    [{ idempotencyTtlSeconds: '10' }, 'idempotencyTtlSeconds'],
    [{ logRetentionDays: 100 }, 'logRetentionDays'],
    [{ stageName: 'has space' }, 'stageName'],
    [{ alarmEmail: 'not-an-address' }, 'alarmEmail'],
    [{ wafRateLimitPerKey: 5 }, 'wafRateLimitPerKey'],
    [{ alarmClientErrorRate: '0' }, 'alarmClientErrorRate'],
    [{ alarmWafBlockedRequests: '0' }, 'alarmWafBlockedRequests'],
    [{ certificateArn: 'not-an-arn', domainName: 'api.example.com' }, 'certificateArn'],
  ])('refuses %p, naming the key', (context, key) => {
    expect(() => fromContext(context)).toThrow(new RegExp(`"${key}"`));
  });

  it("log retention takes exactly CloudWatch's retention periods, as the CDK's RetentionDays lists them", () => {
    const cdkValues = Object.values(RetentionDays).filter((v): v is number => typeof v === 'number');
    expect([...LOG_RETENTION_DAYS].sort((a, b) => a - b)).toEqual(cdkValues.sort((a, b) => a - b));
    expect(DEFAULT_STACK_CONFIG.logRetentionDays).toBe(RetentionDays.THREE_MONTHS);
    for (const days of cdkValues) expect(fromContext({ logRetentionDays: String(days) }).logRetentionDays).toBe(days);
  });
});
