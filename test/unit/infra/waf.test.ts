import { onlyResource, resourcesOfType, synth } from './synth.js';

type Rule = { Name: string; Priority: number; Statement: Record<string, any>; Action?: Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any

function rules(): Rule[] {
  return onlyResource(synth().template, 'AWS::WAFv2::WebACL').Properties.Rules as Rule[];
}
const rule = (name: string): Rule => {
  const found = rules().find((r) => r.Name === name);
  if (!found) throw new Error(`no rule ${name}`);
  return found;
};

describe('the WAF web ACL', () => {
  it('is regional and associated with the API stage when waf is on (the default)', () => {
    const { template } = synth();
    const acl = onlyResource(template, 'AWS::WAFv2::WebACL');
    expect(acl.Properties).toMatchObject({ Scope: 'REGIONAL', DefaultAction: { Allow: {} } });
    const association = onlyResource(template, 'AWS::WAFv2::WebACLAssociation');
    const arn = JSON.stringify(association.Properties.ResourceArn);
    expect(arn).toContain('/restapis/');
    expect(arn).toMatch(/"\/stages\/",\{"Ref":"ApiRestApiDeploymentStage/);
    expect(association.Properties.WebACLArn).toEqual({ 'Fn::GetAtt': [expect.stringMatching(/^FirewallWebAcl/), 'Arn'] });
  });

  it('is absent with waf=false', () => {
    const { template } = synth({ waf: 'false' });
    expect(Object.keys(resourcesOfType(template, 'AWS::WAFv2::WebACL'))).toHaveLength(0);
    expect(Object.keys(resourcesOfType(template, 'AWS::WAFv2::WebACLAssociation'))).toHaveLength(0);
  });

  it('uses the AWS common rule set but only counts its 8 KB body-size rule, so 100-case batches pass', () => {
    const common = rule('AWSManagedRulesCommonRuleSet');
    expect(common.Statement.ManagedRuleGroupStatement).toMatchObject({ VendorName: 'AWS', Name: 'AWSManagedRulesCommonRuleSet' });
    expect(common.Statement.ManagedRuleGroupStatement.RuleActionOverrides).toContainEqual({
      Name: 'SizeRestrictions_BODY',
      ActionToUse: { Count: {} },
    });
  });

  it('only counts the rules that would refuse a webhook URL the API accepts (an IP literal) or answers itself (the metadata address, 400)', () => {
    const overrides = rule('AWSManagedRulesCommonRuleSet').Statement.ManagedRuleGroupStatement.RuleActionOverrides;
    for (const name of ['GenericRFI_BODY', 'EC2MetaDataSSRF_BODY'])
      expect(overrides).toContainEqual({ Name: name, ActionToUse: { Count: {} } });
  });

  it('blocks addresses on the AWS IP reputation list, after the rate rules and before the larger groups', () => {
    const reputation = rule('AWSManagedRulesAmazonIpReputationList');
    expect(reputation.Statement.ManagedRuleGroupStatement).toEqual({ VendorName: 'AWS', Name: 'AWSManagedRulesAmazonIpReputationList' });
    expect(reputation.Priority).toBeGreaterThan(rule('RateLimitPerApiKeyHeader').Priority);
    expect(reputation.Priority).toBeLessThan(rule('AWSManagedRulesCommonRuleSet').Priority);
  });

  it('never keeps sampled requests (they would show live API keys in the console); metrics stay on', () => {
    const acl = onlyResource(synth().template, 'AWS::WAFv2::WebACL');
    const configs = [
      acl.Properties.VisibilityConfig,
      ...rules().map((r) => (r as Rule & { VisibilityConfig: unknown }).VisibilityConfig),
    ] as {
      SampledRequestsEnabled: boolean;
      CloudWatchMetricsEnabled: boolean;
    }[];
    expect(configs).toHaveLength(7);
    for (const config of configs) expect(config).toMatchObject({ SampledRequestsEnabled: false, CloudWatchMetricsEnabled: true });
  });

  it('is named after the stack, with the same CloudWatch metric name', () => {
    const acl = onlyResource(synth().template, 'AWS::WAFv2::WebACL');
    expect(acl.Properties.Name).toBe('PartnerCaseApi-dev');
    expect(acl.Properties.VisibilityConfig).toMatchObject({ MetricName: 'PartnerCaseApi-dev' });
  });

  it('logs blocked and counted requests to an aws-waf-logs- log group, with the API-key headers redacted', () => {
    const { template } = synth();
    const logging = onlyResource(template, 'AWS::WAFv2::LoggingConfiguration');
    expect(logging.Properties.ResourceArn).toEqual({ 'Fn::GetAtt': [expect.stringMatching(/^FirewallWebAcl/), 'Arn'] });
    expect(logging.Properties.RedactedFields).toEqual([
      { SingleHeader: { Name: 'authorization' } },
      { SingleHeader: { Name: 'x-api-key' } },
    ]);
    expect(logging.Properties.LoggingFilter).toEqual({
      DefaultBehavior: 'DROP',
      Filters: [
        {
          Behavior: 'KEEP',
          Requirement: 'MEETS_ANY',
          Conditions: [{ ActionCondition: { Action: 'BLOCK' } }, { ActionCondition: { Action: 'COUNT' } }],
        },
      ],
    });
    const destination = JSON.stringify(logging.Properties.LogDestinationConfigs);
    expect(destination).toContain(':log-group:aws-waf-logs-PartnerCaseApi-dev-');
    expect(destination).not.toContain(':*');
    expect((logging as { DependsOn?: string[] }).DependsOn).toEqual([expect.stringMatching(/^FirewallLogs/)]);
    const [groupId, group] =
      Object.entries(resourcesOfType(template, 'AWS::Logs::LogGroup')).find(([id]) => id.startsWith('FirewallLogs')) ?? [];
    expect(groupId).toBeDefined();
    expect(group?.Properties.RetentionInDays).toBe(90);
    expect(group?.DeletionPolicy).toBe('Retain');
    // Named for the stack and this creation of it (the UUID of the stack id), and the destination is that group.
    const stackUuid = { 'Fn::Select': [2, { 'Fn::Split': ['/', { Ref: 'AWS::StackId' }] }] };
    expect(group?.Properties.LogGroupName).toEqual({ 'Fn::Join': ['', ['aws-waf-logs-PartnerCaseApi-dev-', stackUuid]] });
    expect(destination).toContain(JSON.stringify(stackUuid));
  });

  it('has no log group or logging configuration with waf=false', () => {
    expect(Object.keys(resourcesOfType(synth({ waf: 'false' }).template, 'AWS::WAFv2::LoggingConfiguration'))).toHaveLength(0);
  });

  it('blocks known bad inputs', () => {
    expect(rule('AWSManagedRulesKnownBadInputsRuleSet').Statement.ManagedRuleGroupStatement).toMatchObject({
      VendorName: 'AWS',
      Name: 'AWSManagedRulesKnownBadInputsRuleSet',
    });
  });

  it.each([
    ['RateLimitPerAuthorizationHeader', 'authorization'],
    ['RateLimitPerApiKeyHeader', 'x-api-key'],
  ])('%s limits each API key sent in the %s header', (name, header) => {
    const statement = rule(name).Statement.RateBasedStatement;
    expect(statement).toMatchObject({ AggregateKeyType: 'CUSTOM_KEYS', Limit: 3000, EvaluationWindowSec: 300 });
    expect(statement.CustomKeys).toEqual([
      {
        Header: {
          Name: header,
          TextTransformations: [
            { Priority: 0, Type: 'COMPRESS_WHITE_SPACE' },
            { Priority: 1, Type: 'LOWERCASE' },
          ],
        },
      },
    ]);
  });

  it('limits each source IP, so callers rotating made-up keys are limited too', () => {
    expect(rule('RateLimitPerIp').Statement.RateBasedStatement).toEqual({ AggregateKeyType: 'IP', Limit: 6000, EvaluationWindowSec: 300 });
  });

  it('rate-limited callers get 429 with a RATE_LIMITED body, not a bare 403', () => {
    const acl = onlyResource(synth().template, 'AWS::WAFv2::WebACL');
    for (const name of ['RateLimitPerIp', 'RateLimitPerAuthorizationHeader', 'RateLimitPerApiKeyHeader']) {
      expect(rule(name).Action?.Block.CustomResponse).toMatchObject({ ResponseCode: 429, CustomResponseBodyKey: 'rate-limited' });
    }
    const body = (acl.Properties.CustomResponseBodies as Record<string, { Content: string; ContentType: string }>)['rate-limited'];
    expect(JSON.parse(body?.Content ?? '{}')).toMatchObject({ status: 429, code: 'RATE_LIMITED', type: '/problems/rate-limited' });
  });

  it('rate rules come first so every request is counted', () => {
    const byPriority = [...rules()].sort((a, b) => a.Priority - b.Priority).map((r) => r.Name);
    expect(byPriority.slice(0, 3).every((n) => n.startsWith('RateLimit'))).toBe(true);
  });

  it('the limits come from the CDK context', () => {
    const acl = onlyResource(synth({ wafRateLimitPerKey: '500', wafRateLimitPerIp: '900' }).template, 'AWS::WAFv2::WebACL');
    const limits = Object.fromEntries(
      (acl.Properties.Rules as Rule[])
        .filter((r) => r.Statement.RateBasedStatement)
        .map((r) => [r.Name, r.Statement.RateBasedStatement.Limit as number]),
    );
    expect(limits).toEqual({ RateLimitPerIp: 900, RateLimitPerAuthorizationHeader: 500, RateLimitPerApiKeyHeader: 500 });
  });
});
