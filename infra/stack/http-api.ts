import { RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import {
  AccessLogField,
  AccessLogFormat,
  AuthorizationType,
  CfnRestApi,
  DomainName,
  EndpointAccessMode,
  EndpointType,
  LambdaIntegration,
  LogGroupLogDestination,
  MethodLoggingLevel,
  MockIntegration,
  PassthroughBehavior,
  ResponseType,
  RestApi,
  SecurityPolicy,
  type IResource,
  type Stage,
} from 'aws-cdk-lib/aws-apigateway';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import { AnyPrincipal, ArnPrincipal, Effect, PolicyDocument, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { METHOD_NOT_ALLOWED_RESPONSE, PROBLEM_GATEWAY_RESPONSES, problemHeaders, problemTemplate } from '../contract/problem-responses.js';
import { authorizationOf, methodsOf, pathParametersOf, ROUTE_TABLE, routedResources, type ApiFunctionId } from '../contract/route-table.js';

export interface PartnerApiProps {
  stageName: string;
  throttleRate: number;
  throttleBurst: number;
  logRetention: RetentionDays;
  /** Create the account-level CloudWatch role API Gateway needs for execution logs. */
  cloudWatchRole: boolean;
  /** Serve the API on this domain only (the execute-api endpoint is disabled). */
  customDomain?: { domainName: string; certificateArn: string } | undefined;
  /** Every API function, keyed by the route table's ids. */
  handlers: Readonly<Record<ApiFunctionId, IFunction>>;
  /** Who may call the internal (AWS_IAM) routes: account roots, roles or users (StackConfig.internalPrincipals). */
  internalPrincipals: readonly string[];
}

/**
 * The API's resource policy. With a resource policy in place API Gateway lets through only what it
 * allows, so everything but the internal routes' methods (the partner routes, every 405 answer) is
 * open to anyone: the handlers check the API key. The internal routes' methods are denied to every
 * principal outside `internalPrincipals` (an account root stands for every principal of its account,
 * by `aws:PrincipalAccount`; a role or user by `aws:PrincipalArn`, which for an assumed role is the
 * role's ARN), and allowed to those principals by name, which a caller in another account needs
 * besides its own identity policy. A caller of a listed account still needs `execute-api:Invoke` in
 * its identity policy (naming an account root delegates to that account's IAM). `execute-api:/` is
 * API Gateway's shorthand for this API's ARN. test/unit/infra/internal-routes-policy.test.ts
 * evaluates it with iam-simulate.
 */
export function apiResourcePolicy(internalPrincipals: readonly string[]): PolicyDocument {
  const internalMethods = ROUTE_TABLE.filter((route) => authorizationOf(route) === 'aws-iam').map(
    (route) => `execute-api:/*/${route.method}${route.resource}`,
  );
  const accountRoot = /^arn:[^:]+:iam::(\d{12}):root$/;
  const accounts = internalPrincipals.flatMap((arn) => accountRoot.exec(arn)?.[1] ?? []);
  const named = internalPrincipals.filter((arn) => !accountRoot.test(arn));
  return new PolicyDocument({
    statements: [
      // Everything but the internal methods: an Allow of `*` on those would let any principal of the
      // account call them without an identity policy (same-account access needs only one of the two).
      new PolicyStatement({
        sid: 'AnyoneMayCallThePartnerRoutes',
        principals: [new AnyPrincipal()],
        actions: ['execute-api:Invoke'],
        notResources: internalMethods,
      }),
      new PolicyStatement({
        sid: 'InternalRoutesOnlyForTheirPrincipals',
        effect: Effect.DENY,
        principals: [new AnyPrincipal()],
        actions: ['execute-api:Invoke'],
        resources: internalMethods,
        // Both keys must fail to match for the deny to apply: a caller of a listed account, or a listed role or user, passes.
        conditions: {
          ...(accounts.length > 0 ? { StringNotEquals: { 'aws:PrincipalAccount': accounts } } : {}),
          ...(named.length > 0 ? { ArnNotEquals: { 'aws:PrincipalArn': named } } : {}),
        },
      }),
      new PolicyStatement({
        sid: 'InternalRoutesForTheirPrincipals',
        principals: internalPrincipals.map((arn) => new ArnPrincipal(arn)),
        actions: ['execute-api:Invoke'],
        resources: internalMethods,
      }),
    ],
  });
}

/**
 * The TLS policy of the API and of a custom domain: TLS 1.2 and 1.3 only, forward-secret cipher
 * suites only. It is an "enhanced" policy, so it comes with an endpoint access mode: STRICT
 * refuses requests whose TLS SNI host does not match the endpoint (no domain fronting).
 */
export const TLS_SECURITY_POLICY = SecurityPolicy.TLS13_1_2_PFS_PQ_2025_09;
export const TLS_ENDPOINT_ACCESS_MODE = EndpointAccessMode.STRICT;

/** One JSON object per request; no header values (they carry API keys), no bodies. */
export function accessLogFormat(): AccessLogFormat {
  return AccessLogFormat.custom(
    JSON.stringify({
      requestId: AccessLogField.contextRequestId(),
      extendedRequestId: AccessLogField.contextExtendedRequestId(),
      requestTime: AccessLogField.contextRequestTime(),
      requestTimeEpoch: AccessLogField.contextRequestTimeEpoch(),
      ip: AccessLogField.contextIdentitySourceIp(),
      userAgent: AccessLogField.contextIdentityUserAgent(),
      httpMethod: AccessLogField.contextHttpMethod(),
      resourcePath: AccessLogField.contextResourcePath(),
      path: AccessLogField.contextPath(),
      protocol: AccessLogField.contextProtocol(),
      // Which TLS version and cipher each partner negotiates: the evidence before tightening the policy.
      tlsVersion: '$context.tlsVersion',
      cipherSuite: '$context.cipherSuite',
      status: AccessLogField.contextStatus(),
      responseLength: AccessLogField.contextResponseLength(),
      responseLatency: AccessLogField.contextResponseLatency(),
      integrationStatus: AccessLogField.contextIntegrationStatus(),
      integrationLatency: AccessLogField.contextIntegrationLatency(),
      errorResponseType: AccessLogField.contextErrorResponseType(),
      // The plain message: messageString comes already quoted and would break the JSON line.
      errorMessage: AccessLogField.contextErrorMessage(),
      wafStatus: AccessLogField.contextWafStatus(),
      wafResponseCode: AccessLogField.contextWafResponseCode(),
      xrayTraceId: AccessLogField.contextXrayTraceId(),
    }),
  );
}

/**
 * A known path with a method it does not have answers 405 with `Allow`, as the local server does:
 * an ANY method (API Gateway matches it only for methods not declared on the resource) with a mock
 * integration. The mock never reads the body: its one template serves requests without a
 * Content-Type (API Gateway treats them as JSON) and JSON ones; with any other Content-Type API
 * Gateway refuses the request before the mock, as 415 (passthrough NEVER), which the local
 * server reproduces.
 */
function addMethodNotAllowed(resource: IResource, allowed: string[]): void {
  const headers = problemHeaders({ headers: { Allow: allowed.join(', ') } });
  resource.addMethod(
    'ANY',
    new MockIntegration({
      passthroughBehavior: PassthroughBehavior.NEVER,
      requestTemplates: { 'application/json': JSON.stringify({ statusCode: METHOD_NOT_ALLOWED_RESPONSE.status }) },
      integrationResponses: [
        {
          statusCode: String(METHOD_NOT_ALLOWED_RESPONSE.status),
          responseParameters: Object.fromEntries(Object.entries(headers).map(([name, value]) => [`method.response.header.${name}`, value])),
          responseTemplates: { 'application/json': problemTemplate(METHOD_NOT_ALLOWED_RESPONSE) },
        },
      ],
    }),
    {
      operationName: 'MethodNotAllowed',
      authorizationType: AuthorizationType.NONE,
      methodResponses: [
        {
          statusCode: String(METHOD_NOT_ALLOWED_RESPONSE.status),
          responseParameters: Object.fromEntries(Object.keys(headers).map((name) => [`method.response.header.${name}`, true])),
        },
      ],
    },
  );
}

/**
 * The REST API: the routes of route-table.ts under /api/v1, each a Lambda proxy integration; authentication,
 * scopes, request validation and the 1 MiB body limit are the handlers' job, so that every error
 * is the same problem+json locally and deployed, in the order the product rules fix (401, then
 * 403, then 400/413/415). API Gateway's own errors are problem+json too (problem-responses.ts).
 */
export class PartnerApi extends Construct {
  readonly api: RestApi;
  readonly stage: Stage;
  readonly accessLogGroup: LogGroup;
  readonly domain: DomainName | undefined;
  private readonly customDomainName: string | undefined;

  constructor(scope: Construct, id: string, props: PartnerApiProps) {
    super(scope, id);

    this.accessLogGroup = new LogGroup(this, 'AccessLogs', {
      retention: props.logRetention,
      removalPolicy: RemovalPolicy.RETAIN,
    });

    this.api = new RestApi(this, 'RestApi', {
      restApiName: Stack.of(this).stackName,
      description: 'Partner Case API: invoice uploads, batch case creation and case status.',
      policy: apiResourcePolicy(props.internalPrincipals),
      // Partners call from their servers; a regional endpoint avoids an extra CloudFront hop.
      endpointConfiguration: { types: [EndpointType.REGIONAL] },
      // With a custom domain, partners use only that domain (and its TLS policy): the
      // execute-api URL answers nothing.
      disableExecuteApiEndpoint: props.customDomain !== undefined,
      cloudWatchRole: props.cloudWatchRole,
      // The role is an account-wide setting other APIs may rely on: keep it if the stack goes.
      cloudWatchRoleRemovalPolicy: props.cloudWatchRole ? RemovalPolicy.RETAIN : undefined,
      deployOptions: {
        stageName: props.stageName,
        throttlingRateLimit: props.throttleRate,
        throttlingBurstLimit: props.throttleBurst,
        tracingEnabled: true,
        accessLogDestination: new LogGroupLogDestination(this.accessLogGroup),
        accessLogFormat: accessLogFormat(),
        // Execution logs for errors only; never data trace (it would log API keys and bodies).
        loggingLevel: MethodLoggingLevel.ERROR,
        dataTraceEnabled: false,
      },
    });
    this.stage = this.api.deploymentStage;

    // The L2 RestApi does not expose the REST API's own security policy (aws-cdk-lib 2.276), so it
    // is set on the CloudFormation resource. Without it the execute-api endpoint accepts TLS 1.0.
    const cfnApi = this.api.node.defaultChild as CfnRestApi;
    cfnApi.securityPolicy = TLS_SECURITY_POLICY;
    cfnApi.endpointAccessMode = TLS_ENDPOINT_ACCESS_MODE;

    if (props.customDomain) {
      this.customDomainName = props.customDomain.domainName;
      this.domain = new DomainName(this, 'CustomDomain', {
        domainName: props.customDomain.domainName,
        certificate: Certificate.fromCertificateArn(this, 'Certificate', props.customDomain.certificateArn),
        endpointType: EndpointType.REGIONAL,
        securityPolicy: TLS_SECURITY_POLICY,
        endpointAccessMode: TLS_ENDPOINT_ACCESS_MODE,
      });
      // The stage at the domain root: https://<domain>/api/v1/...
      this.domain.addBasePathMapping(this.api, { stage: this.stage });
    }

    // API Gateway creates the execution log group on first use, without retention. Creating it
    // first (before the stage) gives it one.
    const executionLogs = new LogGroup(this, 'ExecutionLogs', {
      logGroupName: `API-Gateway-Execution-Logs_${this.api.restApiId}/${props.stageName}`,
      retention: props.logRetention,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.stage.node.addDependency(executionLogs);

    const integrate = (fn: IFunction) => new LambdaIntegration(fn, { proxy: true, allowTestInvoke: false });
    for (const path of routedResources()) {
      const resource = this.api.root.resourceForPath(path);
      for (const route of ROUTE_TABLE.filter((r) => r.resource === path)) {
        const parameters = pathParametersOf(path);
        resource.addMethod(route.method, integrate(props.handlers[route.function]), {
          operationName: route.operationName,
          // Partner routes: the handler checks the API key. Internal routes: API Gateway checks the
          // caller's SigV4 signature and execute-api:Invoke permission (no API key is involved).
          authorizationType: authorizationOf(route) === 'aws-iam' ? AuthorizationType.IAM : AuthorizationType.NONE,
          requestParameters: parameters.length ? Object.fromEntries(parameters.map((p) => [`method.request.path.${p}`, true])) : undefined,
        });
      }
      addMethodNotAllowed(resource, methodsOf(path));
    }

    for (const response of PROBLEM_GATEWAY_RESPONSES) {
      this.api.addGatewayResponse(response.id, {
        type: ResponseType.of(response.type),
        // Unset keeps API Gateway's own status (see problem-responses.ts).
        statusCode: response.status === undefined ? undefined : String(response.status),
        responseHeaders: problemHeaders(response),
        templates: { 'application/json': problemTemplate(response) },
      });
    }

    const reason =
      'Partners authenticate with API keys that the handlers verify (hashed key looked up by id in DynamoDB, ' +
      'per-route scopes, revocation effective on the next request); IAM, Cognito or a Lambda authorizer would ' +
      'add a second key store or another Lambda hop without adding protection. The internal routes use AWS_IAM.';
    Validations.of(this.api).acknowledge({ id: 'AwsSolutions-APIG4', reason }, { id: 'AwsSolutions-COG4', reason });
    Validations.of(this.api).acknowledge({
      id: 'AwsSolutions-APIG2',
      reason:
        'Requests are validated by the handlers so that authentication (401) and scope (403) are checked before ' +
        'the request envelope (400/413/415), as the product rules require; an API Gateway validator would answer ' +
        'unauthenticated callers first and with a different error shape.',
    });
    if (props.cloudWatchRole) {
      Validations.of(this.api).acknowledge({
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
        reason:
          'The account-level API Gateway logging role uses the AWS managed policy AWS documents for it; it only ' +
          'lets API Gateway write to CloudWatch Logs.',
      });
    }
  }

  /** The base URL partners use (ends with a slash); routes are under `api/v1/`. */
  get url(): string {
    return this.customDomainName ? `https://${this.customDomainName}/` : this.api.url;
  }
}
