import { CfnWebACL, CfnWebACLAssociation } from 'aws-cdk-lib/aws-wafv2';
import type { Stage } from 'aws-cdk-lib/aws-apigateway';
import { Construct } from 'constructs';

/** Rate-based rules count over this window (WAF allows 60, 120, 300 or 600 seconds). */
export const RATE_WINDOW_SECONDS = 300;

export interface ApiFirewallProps {
  stage: Stage;
  /** Requests per window allowed for one API key. */
  rateLimitPerKey: number;
  /** Requests per window allowed from one source IP, whatever key it sends. */
  rateLimitPerIp: number;
}

const RATE_LIMITED_BODY_KEY = 'rate-limited';

function visibility(metricName: string): CfnWebACL.VisibilityConfigProperty {
  return { metricName, cloudWatchMetricsEnabled: true, sampledRequestsEnabled: true };
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
 * is counted, then AWS's managed rule groups.
 */
export class ApiFirewall extends Construct {
  readonly webAcl: CfnWebACL;
  readonly association: CfnWebACLAssociation;

  constructor(scope: Construct, id: string, props: ApiFirewallProps) {
    super(scope, id);

    this.webAcl = new CfnWebACL(this, 'WebAcl', {
      scope: 'REGIONAL',
      defaultAction: { allow: {} },
      description: 'Partner Case API: rate limits and AWS managed protections.',
      visibilityConfig: visibility('PartnerCaseApiWebAcl'),
      customResponseBodies: {
        [RATE_LIMITED_BODY_KEY]: {
          contentType: 'APPLICATION_JSON',
          content: JSON.stringify({
            type: '/problems/rate-limited',
            title: 'Too many requests',
            status: 429,
            detail: 'The request rate limit was exceeded. Retry after the Retry-After delay, with backoff.',
            code: 'RATE_LIMITED',
          }),
        },
      },
      rules: [
        {
          name: 'RateLimitPerIp',
          priority: 0,
          action: blockAsRateLimited,
          statement: {
            rateBasedStatement: {
              limit: props.rateLimitPerIp,
              evaluationWindowSec: RATE_WINDOW_SECONDS,
              aggregateKeyType: 'IP',
            },
          },
          visibilityConfig: visibility('RateLimitPerIp'),
        },
        perHeaderRateRule('RateLimitPerAuthorizationHeader', 1, 'authorization', props.rateLimitPerKey),
        perHeaderRateRule('RateLimitPerApiKeyHeader', 2, 'x-api-key', props.rateLimitPerKey),
        // SizeRestrictions_BODY blocks bodies over 8 KB, but a legitimate batch of 100 cases is up
        // to 1 MiB (the handler refuses larger bodies with 413), so it only counts. NoUserAgent_HEADER
        // only counts too: partners call from back-end systems whose HTTP clients often send no
        // User-Agent, and a missing User-Agent says nothing about an authenticated caller.
        managedRuleGroup('AWSManagedRulesCommonRuleSet', 3, [
          countOnly('SizeRestrictions_BODY'),
          countOnly('NoUserAgent_HEADER'),
        ]),
        managedRuleGroup('AWSManagedRulesKnownBadInputsRuleSet', 4),
      ],
    });

    this.association = new CfnWebACLAssociation(this, 'StageAssociation', {
      resourceArn: props.stage.stageArn,
      webAclArn: this.webAcl.attrArn,
    });
    this.association.node.addDependency(props.stage);
  }
}
