import { Match } from 'aws-cdk-lib/assertions';
import { PROBLEM_GATEWAY_RESPONSES, problemTemplate } from '../../../infra/problem-responses.js';
import { onlyResource, prodContext, resourcesOfType, synth, type Resource } from './synth.js';

type Method = Resource & { Properties: { HttpMethod: string; ResourceId: { Ref: string }; Integration: Record<string, unknown> } };

/** "METHOD /full/path" → integration target function logical id. */
function routes(context: Record<string, unknown> = {}): Record<string, string> {
  const { template } = synth(context);
  const resources = resourcesOfType(template, 'AWS::ApiGateway::Resource');
  const pathOf = (logicalId: string): string => {
    const r = resources[logicalId];
    if (!r) return '';
    const parent = r.Properties.ParentId as { Ref?: string };
    return `${parent.Ref ? pathOf(parent.Ref) : ''}/${r.Properties.PathPart as string}`;
  };
  const out: Record<string, string> = {};
  for (const method of Object.values(resourcesOfType(template, 'AWS::ApiGateway::Method')) as Method[]) {
    const uri = JSON.stringify(method.Properties.Integration.Uri);
    const target = /"Fn::GetAtt":\["(\w+)","Arn"\]/.exec(uri)?.[1] ?? 'unknown';
    out[`${method.Properties.HttpMethod} ${pathOf(method.Properties.ResourceId.Ref)}`] = target.replace(/Function\w+$/, '');
  }
  return out;
}

describe('the REST API', () => {
  it('exposes exactly the three v1 routes, each backed by its function', () => {
    expect(routes()).toEqual({
      'POST /api/v1/uploads': 'CreateUpload',
      'POST /api/v1/cases': 'CreateCases',
      'GET /api/v1/cases/{id}': 'GetCase',
    });
  });

  it('integrates every route as a Lambda proxy, with no API Gateway authorizer or validator', () => {
    const { template } = synth();
    for (const method of Object.values(resourcesOfType(template, 'AWS::ApiGateway::Method'))) {
      expect(method.Properties).toMatchObject({
        AuthorizationType: 'NONE',
        Integration: { Type: 'AWS_PROXY', IntegrationHttpMethod: 'POST' },
      });
      expect(method.Properties.RequestValidatorId).toBeUndefined();
    }
    expect(Object.keys(resourcesOfType(template, 'AWS::ApiGateway::RequestValidator'))).toHaveLength(0);
    expect(Object.keys(resourcesOfType(template, 'AWS::ApiGateway::Authorizer'))).toHaveLength(0);
  });

  it('is regional, named after the stack, and accepts no binary media types', () => {
    const api = onlyResource(synth().template, 'AWS::ApiGateway::RestApi');
    expect(api.Properties).toMatchObject({ Name: 'PartnerCaseApi-dev', EndpointConfiguration: { Types: ['REGIONAL'] } });
    expect(api.Properties.BinaryMediaTypes).toBeUndefined();
  });

  it('lets API Gateway invoke each function only through its own route', () => {
    const permissions = Object.values(resourcesOfType(synth().template, 'AWS::Lambda::Permission'));
    expect(permissions).toHaveLength(3);
    for (const p of permissions) {
      expect(p.Properties.Principal).toBe('apigateway.amazonaws.com');
      expect(JSON.stringify(p.Properties.SourceArn)).not.toContain('test-invoke-stage');
    }
  });

  it('the stage takes its name and throttling from the context, traces with X-Ray and logs errors only', () => {
    const stage = onlyResource(synth({ stageName: 'v1', throttleRate: '20', throttleBurst: '40' }).template, 'AWS::ApiGateway::Stage');
    expect(stage.Properties).toMatchObject({
      StageName: 'v1',
      TracingEnabled: true,
      MethodSettings: [
        { HttpMethod: '*', ResourcePath: '/*', LoggingLevel: 'ERROR', DataTraceEnabled: false, ThrottlingRateLimit: 20, ThrottlingBurstLimit: 40 },
      ],
    });
  });

  it.each([
    ['dev', {}],
    ['prod', prodContext()],
  ])('the %s deployment serves the API Gateway stage of the same name, throttled at 50 requests per second with bursts of 100', (name, context) => {
    const stage = onlyResource(synth(context).template, 'AWS::ApiGateway::Stage');
    expect(stage.Properties).toMatchObject({
      StageName: name,
      MethodSettings: [expect.objectContaining({ ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100 })],
    });
  });

  it('writes one JSON access-log line per request, with the request id, to a log group with retention', () => {
    const { template } = synth();
    const stage = onlyResource(template, 'AWS::ApiGateway::Stage');
    const setting = stage.Properties.AccessLogSetting as { Format: string; DestinationArn: unknown };
    const line = JSON.parse(setting.Format) as Record<string, string>;
    expect(line).toMatchObject({
      requestId: '$context.requestId',
      status: '$context.status',
      ip: '$context.identity.sourceIp',
      errorMessage: '$context.error.message',
    });
    expect(line).toMatchObject({ tlsVersion: '$context.tlsVersion', cipherSuite: '$context.cipherSuite' });
    expect(setting.Format).not.toMatch(/header|Authorization|api-key/i);
    const logGroupId = /"Ref":"(ApiAccessLogs\w+)"/.exec(JSON.stringify(setting.DestinationArn))?.[1] ?? '';
    expect(resourcesOfType(template, 'AWS::Logs::LogGroup')[logGroupId]?.Properties.RetentionInDays).toBe(90);
  });

  it('creates the execution log group with retention before the stage can write to it', () => {
    const { template } = synth();
    const stageEntry = Object.values(resourcesOfType(template, 'AWS::ApiGateway::Stage'))[0] as Resource & { DependsOn: string[] };
    const executionLogs = Object.entries(resourcesOfType(template, 'AWS::Logs::LogGroup')).find(([id]) => id.startsWith('ApiExecutionLogs'));
    expect(executionLogs?.[1].Properties.RetentionInDays).toBe(90);
    expect(stageEntry.DependsOn).toContain(executionLogs?.[0]);
  });

  it('creates the account-level logging role unless apiGatewayCloudWatchRole=false', () => {
    expect(Object.keys(resourcesOfType(synth().template, 'AWS::ApiGateway::Account'))).toHaveLength(1);
    expect(Object.keys(resourcesOfType(synth({ apiGatewayCloudWatchRole: 'false' }).template, 'AWS::ApiGateway::Account'))).toHaveLength(0);
  });

  it('outputs ApiUrl, TableName and BucketName', () => {
    const { template } = synth();
    template.hasOutput('ApiUrl', { Value: Match.objectLike({ 'Fn::Join': Match.anyValue() }) });
    template.hasOutput('TableName', { Value: { Ref: Match.stringLikeRegexp('^DataStoresTable') } });
    template.hasOutput('BucketName', { Value: { Ref: Match.stringLikeRegexp('^DataStoresInvoiceBucket') } });
  });
});

describe('TLS', () => {
  const domainContext = {
    domainName: 'api.partner-cases.example.com',
    certificateArn: 'arn:aws:acm:eu-west-2:111111111111:certificate/0f3a8c1e-1234-4abc-9def-123456789abc',
  };

  it('the execute-api endpoint accepts TLS 1.2 and 1.3 only, with forward secrecy, and checks the SNI host', () => {
    const api = onlyResource(synth().template, 'AWS::ApiGateway::RestApi');
    expect(api.Properties).toMatchObject({ SecurityPolicy: 'SecurityPolicy_TLS13_1_2_PFS_PQ_2025_09', EndpointAccessMode: 'STRICT' });
    expect(api.Properties.DisableExecuteApiEndpoint).toBe(false);
    expect(Object.keys(resourcesOfType(synth().template, 'AWS::ApiGateway::DomainName'))).toHaveLength(0);
  });

  it('a custom domain from the context gets the same TLS 1.2+ policy, maps the stage at its root and disables the execute-api endpoint', () => {
    const { template } = synth(domainContext);
    const domain = onlyResource(template, 'AWS::ApiGateway::DomainName');
    expect(domain.Properties).toMatchObject({
      DomainName: domainContext.domainName,
      RegionalCertificateArn: domainContext.certificateArn,
      EndpointConfiguration: { Types: ['REGIONAL'] },
      SecurityPolicy: 'SecurityPolicy_TLS13_1_2_PFS_PQ_2025_09',
      EndpointAccessMode: 'STRICT',
    });
    const mapping = onlyResource(template, 'AWS::ApiGateway::BasePathMapping');
    expect(mapping.Properties.BasePath).toBeUndefined();
    expect(mapping.Properties.Stage).toEqual({ Ref: expect.stringMatching(/^ApiRestApiDeploymentStage/) });
    expect(onlyResource(template, 'AWS::ApiGateway::RestApi').Properties.DisableExecuteApiEndpoint).toBe(true);
    template.hasOutput('ApiUrl', { Value: `https://${domainContext.domainName}/` });
    template.hasOutput('CustomDomainTarget', { Value: { 'Fn::GetAtt': [Match.stringLikeRegexp('^ApiCustomDomain'), 'RegionalDomainName'] } });
  });

  it('a custom domain can be pinned per stage in cdk.json', () => {
    const { template } = synth(prodContext({ stages: { prod: { account: '222222222222', region: 'eu-west-2', ...domainContext, certificateArn: domainContext.certificateArn.replace('111111111111', '222222222222') } } }));
    expect(onlyResource(template, 'AWS::ApiGateway::DomainName').Properties.DomainName).toBe(domainContext.domainName);
  });
});

describe("API Gateway's own errors", () => {
  const responses = () =>
    Object.fromEntries(
      Object.values(resourcesOfType(synth().template, 'AWS::ApiGateway::GatewayResponse')).map((r) => [r.Properties.ResponseType as string, r.Properties]),
    );

  it.each([
    ['DEFAULT_4XX', '400', 'INVALID_REQUEST', '/problems/invalid-request'],
    ['MISSING_AUTHENTICATION_TOKEN', '404', 'NOT_FOUND', '/problems/not-found'],
    ['RESOURCE_NOT_FOUND', '404', 'NOT_FOUND', '/problems/not-found'],
    ['INVALID_SIGNATURE', '404', 'NOT_FOUND', '/problems/not-found'],
    ['THROTTLED', '429', 'RATE_LIMITED', '/problems/rate-limited'],
    ['WAF_FILTERED', '403', 'FORBIDDEN', '/problems/forbidden'],
    ['REQUEST_TOO_LARGE', '413', 'PAYLOAD_TOO_LARGE', '/problems/payload-too-large'],
    ['DEFAULT_5XX', '500', 'INTERNAL', '/problems/internal'],
  ])('%s answers %s problem+json with code %s', (type, status, code, problemType) => {
    const response = responses()[type];
    expect(response).toBeDefined();
    expect(response?.StatusCode).toBe(status);
    expect(response?.ResponseParameters).toMatchObject({
      'gatewayresponse.header.Content-Type': "'application/problem+json'",
      'gatewayresponse.header.Cache-Control': "'no-store'",
    });
    const template = (response?.ResponseTemplates as Record<string, string>)['application/json'] ?? '';
    const body = JSON.parse(template.replace('$context.requestId', 'abc-123')) as Record<string, unknown>;
    expect(body).toEqual({ type: problemType, title: expect.any(String), status: Number(status), detail: expect.any(String), code, requestId: 'abc-123' });
  });

  it('a throttled caller is told when to retry', () => {
    expect(responses().THROTTLED?.ResponseParameters).toMatchObject({ 'gatewayresponse.header.Retry-After': "'1'" });
  });

  it('every template is JSON once API Gateway fills in the request id', () => {
    for (const response of PROBLEM_GATEWAY_RESPONSES) {
      expect(() => JSON.parse(problemTemplate(response).replace('$context.requestId', 'x'))).not.toThrow();
    }
  });
});
