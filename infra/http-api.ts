import { RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import {
  AccessLogField,
  AccessLogFormat,
  AuthorizationType,
  EndpointType,
  LambdaIntegration,
  LogGroupLogDestination,
  MethodLoggingLevel,
  RestApi,
  type Stage,
} from 'aws-cdk-lib/aws-apigateway';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { PROBLEM_GATEWAY_RESPONSES, problemHeaders, problemTemplate } from './problem-responses.js';

export interface PartnerApiProps {
  stageName: string;
  throttleRate: number;
  throttleBurst: number;
  logRetention: RetentionDays;
  /** Create the account-level CloudWatch role API Gateway needs for execution logs. */
  cloudWatchRole: boolean;
  handlers: {
    createUpload: IFunction;
    createCases: IFunction;
    getCase: IFunction;
  };
}

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
 * The REST API: three routes under /api/v1, each a Lambda proxy integration; authentication,
 * scopes, request validation and the 1 MiB body limit are the handlers' job, so that every error
 * is the same problem+json locally and deployed, in the order the product rules fix (401, then
 * 403, then 400/413/415). API Gateway's own errors are problem+json too (problem-responses.ts).
 */
export class PartnerApi extends Construct {
  readonly api: RestApi;
  readonly stage: Stage;
  readonly accessLogGroup: LogGroup;

  constructor(scope: Construct, id: string, props: PartnerApiProps) {
    super(scope, id);

    this.accessLogGroup = new LogGroup(this, 'AccessLogs', {
      retention: props.logRetention,
      removalPolicy: RemovalPolicy.RETAIN,
    });

    this.api = new RestApi(this, 'RestApi', {
      restApiName: Stack.of(this).stackName,
      description: 'Partner Case API: invoice uploads, batch case creation and case status.',
      // Partners call from their servers; a regional endpoint avoids an extra CloudFront hop.
      endpointConfiguration: { types: [EndpointType.REGIONAL] },
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

    // API Gateway creates the execution log group on first use, without retention. Creating it
    // first (before the stage) gives it one.
    const executionLogs = new LogGroup(this, 'ExecutionLogs', {
      logGroupName: `API-Gateway-Execution-Logs_${this.api.restApiId}/${props.stageName}`,
      retention: props.logRetention,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.stage.node.addDependency(executionLogs);

    const v1 = this.api.root.addResource('api').addResource('v1');
    const integrate = (fn: IFunction) => new LambdaIntegration(fn, { proxy: true, allowTestInvoke: false });

    v1.addResource('uploads').addMethod('POST', integrate(props.handlers.createUpload), {
      operationName: 'CreateUpload',
      authorizationType: AuthorizationType.NONE,
    });
    const cases = v1.addResource('cases');
    cases.addMethod('POST', integrate(props.handlers.createCases), {
      operationName: 'CreateCases',
      authorizationType: AuthorizationType.NONE,
    });
    cases.addResource('{id}').addMethod('GET', integrate(props.handlers.getCase), {
      operationName: 'GetCase',
      authorizationType: AuthorizationType.NONE,
      requestParameters: { 'method.request.path.id': true },
    });

    for (const response of PROBLEM_GATEWAY_RESPONSES) {
      this.api.addGatewayResponse(response.id, {
        type: response.type,
        statusCode: String(response.status),
        responseHeaders: problemHeaders(response),
        templates: { 'application/json': problemTemplate(response) },
      });
    }

    const reason =
      'Partners authenticate with API keys that the handlers verify (hashed key looked up by id in DynamoDB, ' +
      'per-route scopes, revocation effective on the next request); IAM, Cognito or a Lambda authorizer would ' +
      'add a second key store or another Lambda hop without adding protection.';
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

  /** The base URL of the stage (ends with a slash); routes are under `api/v1/`. */
  get url(): string {
    return this.api.url;
  }
}
