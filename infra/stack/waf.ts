import { ArnFormat, Fn, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type { Stage } from 'aws-cdk-lib/aws-apigateway';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { CfnLoggingConfiguration, CfnWebACL, CfnWebACLAssociation } from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { problemType } from '../../lib/http/problem-details.js';

/** Rate-based rules count over this window (WAF allows 60, 120, 300 or 600 seconds). */
export const RATE_WINDOW_SECONDS = 300;

export interface ApiFirewallProps {
  /** The web ACL's name (and CloudWatch metric name); the stack name keeps it unique per stage. */
  name: string;
  stage: Stage;
  logRetention: RetentionDays;
  /** Requests per window allowed for one API key. */
  rateLimitPerKey: number;
  /** Requests per window allowed from one source IP, whatever key it sends. */
  rateLimitPerIp: number;
}

const RATE_LIMITED_BODY_KEY = 'rate-limited';

/**
 * The UUID at the end of the stack's id (`arn:...:stack/<name>/<uuid>`): the same for the life of
 * one stack, different for a stack of the same name created again.
 */
export function stackInstanceId(stack: Stack): string {
  return Fn.select(2, Fn.split('/', stack.stackId));
}

/** The headers that carry API keys: WAF logs never show them. */
export const REDACTED_HEADERS = ['authorization', 'x-api-key'] as const;

/** The rate-based rules (their names are also their metric names). */
export const RATE_RULE_NAMES = ['RateLimitPerIp', 'RateLimitPerAuthorizationHeader', 'RateLimitPerApiKeyHeader'] as const;

/**
 * Metrics on, sampled requests off everywhere. A sample shows the whole request in the console,
 * headers included, so every sampled request of an authenticated partner would show a live API
 * key, and sampling has no redaction. The WAF log (redacted) is where blocked requests are read.
 */
function visibility(metricName: string): CfnWebACL.VisibilityConfigProperty {
  return { metricName, cloudWatchMetricsEnabled: true, sampledRequestsEnabled: false };
}

/**
 * A WAF rule answering 429 instead of WAF's default 403. WAF custom responses take precedence
 * over API Gateway's gateway responses; WAF cannot set Content-Type, so this body goes out as
 * application/json (the members are the problem-details ones, without requestId: API Gateway has
 * not seen the request).
 */
const blockAsRateLimited: CfnWebACL.RuleActionProperty = {
  block: {
    customResponse: {
      responseCode: 429,
      customResponseBodyKey: RATE_LIMITED_BODY_KEY,
      responseHeaders: [{ name: 'Retry-After', value: '60' }],
    },
  },
};

/**
 * Per-key rate rule. API keys arrive in `Authorization: Bearer <key>` or `X-Api-Key: <key>`, so
 * there is one rule per header, each aggregating on that header's value (a request without the
 * header is not counted by that rule). Whitespace is compressed and case folded so
 * "bearer  KEY" and "Bearer KEY" share one counter (keys are long random strings; folding their
 * case cannot merge two real keys in practice). A caller rotating made-up keys escapes these two
 * rules but not the per-IP rule.
 */
function perHeaderRateRule(name: string, priority: number, header: string, limit: number): CfnWebACL.RuleProperty {
  return {
    name,
    priority,
    action: blockAsRateLimited,
    statement: {
      rateBasedStatement: {
        limit,
        evaluationWindowSec: RATE_WINDOW_SECONDS,
        aggregateKeyType: 'CUSTOM_KEYS',
        customKeys: [
          {
            header: {
              name: header,
              textTransformations: [
                { priority: 0, type: 'COMPRESS_WHITE_SPACE' },
                { priority: 1, type: 'LOWERCASE' },
              ],
            },
          },
        ],
      },
    },
    visibilityConfig: visibility(name),
  };
}

function managedRuleGroup(
  name: string,
  priority: number,
  ruleActionOverrides?: CfnWebACL.RuleActionOverrideProperty[],
): CfnWebACL.RuleProperty {
  return {
    name,
    priority,
    overrideAction: { none: {} },
    statement: {
      managedRuleGroupStatement: {
        vendorName: 'AWS',
        name,
        ...(ruleActionOverrides ? { ruleActionOverrides } : {}),
      },
    },
    visibilityConfig: visibility(name),
  };
}

const countOnly = (name: string): CfnWebACL.RuleActionOverrideProperty => ({ name, actionToUse: { count: {} } });

/**
 * The regional WAF web ACL in front of the API stage. Rate rules come first so that every request
 * is counted, then AWS's managed rule groups: IP reputation (known bots and attackers), the
 * common rule set and known bad inputs. Blocked and counted requests are logged to CloudWatch
 * Logs with the API-key headers redacted.
 */
export class ApiFirewall extends Construct {
  readonly webAcl: CfnWebACL;
  readonly association: CfnWebACLAssociation;
  readonly logGroup: LogGroup;
  readonly loggingConfiguration: CfnLoggingConfiguration;
  /** The web ACL's CloudWatch metric name (the `WebACL` dimension of AWS/WAFV2 metrics). */
  readonly metricName: string;

  constructor(scope: Construct, id: string, props: ApiFirewallProps) {
    super(scope, id);
    this.metricName = props.name;
    const [perIp, perAuthorization, perApiKey] = RATE_RULE_NAMES;

    this.webAcl = new CfnWebACL(this, 'WebAcl', {
      name: props.name,
      scope: 'REGIONAL',
      defaultAction: { allow: {} },
      description: 'Partner Case API: rate limits and AWS managed protections.',
      visibilityConfig: visibility(this.metricName),
      customResponseBodies: {
        [RATE_LIMITED_BODY_KEY]: {
          contentType: 'APPLICATION_JSON',
          content: JSON.stringify({
            type: problemType('RATE_LIMITED'),
            title: 'Too many requests',
            status: 429,
            detail: 'The request rate limit was exceeded. Retry after the Retry-After delay, with backoff.',
            code: 'RATE_LIMITED',
          }),
        },
      },
      rules: [
        {
          name: perIp,
          priority: 0,
          action: blockAsRateLimited,
          statement: {
            rateBasedStatement: {
              limit: props.rateLimitPerIp,
              evaluationWindowSec: RATE_WINDOW_SECONDS,
              aggregateKeyType: 'IP',
            },
          },
          visibilityConfig: visibility(perIp),
        },
        perHeaderRateRule(perAuthorization, 1, 'authorization', props.rateLimitPerKey),
        perHeaderRateRule(perApiKey, 2, 'x-api-key', props.rateLimitPerKey),
        // Addresses AWS threat intelligence lists as bots, scanners or sources of attacks; cheap
        // (25 WCU) and evaluated before the larger groups.
        managedRuleGroup('AWSManagedRulesAmazonIpReputationList', 3),
        // SizeRestrictions_BODY blocks bodies over 8 KB, but a legitimate batch of 100 cases is up
        // to 1 MiB (the handler refuses larger bodies with 413), so it only counts. NoUserAgent_HEADER
        // only counts too: partners call from back-end systems whose HTTP clients often send no
        // User-Agent, and a missing User-Agent says nothing about an authenticated caller.
        // GenericRFI_BODY and EC2MetaDataSSRF_BODY only count too: they block a body holding a URL
        // whose host is an IPv4 address, or the instance metadata address, which is exactly what a
        // webhook endpoint's `url` may be (docs/api.md accepts a public IP literal, and answers the
        // metadata address 400 INVALID_URL): the handler already refuses every address that is not
        // public, and no other field of the API takes a URL.
        managedRuleGroup('AWSManagedRulesCommonRuleSet', 4, [
          countOnly('SizeRestrictions_BODY'),
          countOnly('NoUserAgent_HEADER'),
          countOnly('GenericRFI_BODY'),
          countOnly('EC2MetaDataSSRF_BODY'),
        ]),
        managedRuleGroup('AWSManagedRulesKnownBadInputsRuleSet', 5),
      ],
    });

    this.association = new CfnWebACLAssociation(this, 'StageAssociation', {
      resourceArn: props.stage.stageArn,
      webAclArn: this.webAcl.attrArn,
    });
    this.association.node.addDependency(props.stage);

    // WAF only delivers to log groups whose name starts with aws-waf-logs-. The name ends in the
    // stack id's UUID, new for every creation of the stack: the group is retained, so a first
    // create that fails and rolls back leaves it behind, and a fixed name would make the retry fail
    // with "already exists" (docs/deploy.md "A failed first deploy").
    const logGroupName = `aws-waf-logs-${props.name}-${stackInstanceId(Stack.of(this))}`;
    this.logGroup = new LogGroup(this, 'Logs', {
      logGroupName,
      retention: props.logRetention,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.loggingConfiguration = new CfnLoggingConfiguration(this, 'Logging', {
      resourceArn: this.webAcl.attrArn,
      // WAF wants the log group ARN without the ":*" suffix CDK's logGroupArn carries.
      logDestinationConfigs: [
        Stack.of(this).formatArn({
          service: 'logs',
          resource: 'log-group',
          resourceName: logGroupName,
          arnFormat: ArnFormat.COLON_RESOURCE_NAME,
        }),
      ],
      redactedFields: REDACTED_HEADERS.map((name) => ({ singleHeader: { Name: name } })),
      // Allowed requests are already in the API access log; the WAF log is for explaining blocks
      // and counts (which rule, which label), so only those are kept.
      loggingFilter: {
        DefaultBehavior: 'DROP',
        Filters: [
          {
            Behavior: 'KEEP',
            Requirement: 'MEETS_ANY',
            Conditions: [{ ActionCondition: { Action: 'BLOCK' } }, { ActionCondition: { Action: 'COUNT' } }],
          },
        ],
      },
    });
    // The destination ARN is written out (no reference), so the order is stated.
    this.loggingConfiguration.node.addDependency(this.logGroup);
  }
}
