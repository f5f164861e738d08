import { ResponseType } from 'aws-cdk-lib/aws-apigateway';
import { Match } from 'aws-cdk-lib/assertions';
import { PROBLEM_GATEWAY_RESPONSES, problemTemplate } from '../../../infra/contract/problem-responses.js';
import { API_FUNCTIONS, methodsOf, ROUTE_TABLE, routedResources } from '../../../infra/contract/route-table.js';
import { methods } from './api-methods.js';
import { onlyResource, prodContext, resourcesOfType, synth, type Resource } from './synth.js';

/** "METHOD /full/path" → integration target function logical id, for the Lambda-backed methods. */
function routes(context: Record<string, unknown> = {}): Record<string, string> {
  const out: Record<string, string> = {};
  for (const { method, path } of methods(synth(context).template)) {
    if (method.Properties.HttpMethod === 'ANY') continue;
    const uri = JSON.stringify(method.Properties.Integration.Uri);
    const target = /"Fn::GetAtt":\["(\w+)","Arn"\]/.exec(uri)?.[1] ?? 'unknown';
    out[`${method.Properties.HttpMethod} ${path}`] = target.replace(/Function\w+$/, '');
  }
  return out;
}

describe('the REST API', () => {
  it('serves exactly the routes of the route table, each with its operation name and function', () => {
    const served = methods(synth().template)
      .filter(({ method }) => method.Properties.HttpMethod !== 'ANY')
      .map(({ method, path }) => ({
        method: method.Properties.HttpMethod,
        resource: path,
        operationName: method.Properties.OperationName,
      }));
    expect(served).toEqual(
      expect.arrayContaining(ROUTE_TABLE.map(({ method, resource, operationName }) => ({ method, resource, operationName }))),
    );
    expect(served).toHaveLength(ROUTE_TABLE.length);
    const targets = routes();
    for (const route of ROUTE_TABLE) expect(targets[`${route.method} ${route.resource}`]).toBe(API_FUNCTIONS[route.function].constructId);
  });

  it('integrates every route as a Lambda proxy, with no API Gateway authorizer or validator; partner routes are open to the handler, internal ones AWS_IAM', () => {
    const { template } = synth();
    for (const { method, path } of methods(template).filter(({ method: m }) => m.Properties.HttpMethod !== 'ANY')) {
      expect(method.Properties).toMatchObject({
        AuthorizationType: path.startsWith('/internal/') ? 'AWS_IAM' : 'NONE',
        Integration: { Type: 'AWS_PROXY', IntegrationHttpMethod: 'POST' },
      });
      expect(method.Properties.ApiKeyRequired).not.toBe(true);
      expect(method.Properties.RequestValidatorId).toBeUndefined();
    }
    expect(Object.keys(resourcesOfType(template, 'AWS::ApiGateway::RequestValidator'))).toHaveLength(0);
    expect(Object.keys(resourcesOfType(template, 'AWS::ApiGateway::Authorizer'))).toHaveLength(0);
  });

  it('authorises the internal confirmations route with AWS IAM only: a partner API key can never reach its function', () => {
    const { template } = synth();
    const internal = methods(template).filter(({ path }) => path === '/internal/v1/confirmations');
    const post = internal.find(({ method }) => method.Properties.HttpMethod === 'POST');
    expect(post?.method.Properties).toMatchObject({ AuthorizationType: 'AWS_IAM', OperationName: 'ConfirmCases' });
    expect(post?.method.Properties.AuthorizerId).toBeUndefined();
    // The stage requires no API Gateway API key anywhere (partner keys are the handlers' own), and no usage plan hands one out.
    expect(Object.keys(resourcesOfType(template, 'AWS::ApiGateway::ApiKey'))).toHaveLength(0);
    expect(Object.keys(resourcesOfType(template, 'AWS::ApiGateway::UsagePlan'))).toHaveLength(0);
    // The only other method on the path is the 405 mock: it never reaches a function.
    expect(
      internal.filter(({ method }) => method.Properties.HttpMethod !== 'POST').map(({ method }) => method.Properties.Integration.Type),
    ).toEqual(['MOCK']);
  });

  it('is regional, named after the stack, and accepts no binary media types', () => {
    const api = onlyResource(synth().template, 'AWS::ApiGateway::RestApi');
    expect(api.Properties).toMatchObject({ Name: 'PartnerCaseApi-dev', EndpointConfiguration: { Types: ['REGIONAL'] } });
    expect(api.Properties.BinaryMediaTypes).toBeUndefined();
  });

  it('lets API Gateway invoke each function only through its own route', () => {
    // The one other permission lets the invoice bucket invoke the record-upload function (functions.test.ts).
    const permissions = Object.values(resourcesOfType(synth().template, 'AWS::Lambda::Permission')).filter(
      (p) => p.Properties.Principal !== 's3.amazonaws.com',
    );
    expect(permissions).toHaveLength(ROUTE_TABLE.length);
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
        {
          HttpMethod: '*',
          ResourcePath: '/*',
          LoggingLevel: 'ERROR',
          DataTraceEnabled: false,
          ThrottlingRateLimit: 20,
          ThrottlingBurstLimit: 40,
        },
      ],
    });
  });

  it.each([
    ['dev', {}],
    ['prod', prodContext()],
  ])(
    'the %s deployment serves the API Gateway stage of the same name, throttled at 50 requests per second with bursts of 100',
    (name, context) => {
      const stage = onlyResource(synth(context).template, 'AWS::ApiGateway::Stage');
      expect(stage.Properties).toMatchObject({
        StageName: name,
        MethodSettings: [expect.objectContaining({ ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100 })],
      });
    },
  );

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
    const executionLogs = Object.entries(resourcesOfType(template, 'AWS::Logs::LogGroup')).find(([id]) =>
      id.startsWith('ApiExecutionLogs'),
    );
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
    template.hasOutput('CustomDomainTarget', {
      Value: { 'Fn::GetAtt': [Match.stringLikeRegexp('^ApiCustomDomain'), 'RegionalDomainName'] },
    });
  });

  it('a custom domain can be pinned per stage in cdk.json', () => {
    const { template } = synth(
      prodContext({
        stages: {
          prod: {
            account: '222222222222',
            region: 'eu-west-2',
            ...domainContext,
            certificateArn: domainContext.certificateArn.replace('111111111111', '222222222222'),
          },
        },
      }),
    );
    expect(onlyResource(template, 'AWS::ApiGateway::DomainName').Properties.DomainName).toBe(domainContext.domainName);
  });
});

describe('a known path with a method it does not have', () => {
  const anyMethods = () => methods(synth().template).filter(({ method }) => method.Properties.HttpMethod === 'ANY');

  it('is answered by an ANY mock method on every routed resource, and on no other', () => {
    expect(
      anyMethods()
        .map(({ path }) => path)
        .sort(),
    ).toEqual(routedResources().sort());
  });

  it.each(routedResources())(
    '%s answers 405 METHOD_NOT_ALLOWED problem+json with Allow naming its methods, never calling a function',
    (path) => {
      const found = anyMethods().find((m) => m.path === path);
      const { Integration: integration, MethodResponses: methodResponses, AuthorizationType } = found!.method.Properties;
      expect(AuthorizationType).toBe('NONE');
      expect(integration).toMatchObject({
        Type: 'MOCK',
        PassthroughBehavior: 'NEVER',
        RequestTemplates: { 'application/json': '{"statusCode":405}' },
      });
      const responses = integration.IntegrationResponses as {
        StatusCode: string;
        SelectionPattern?: string;
        ResponseParameters: Record<string, string>;
        ResponseTemplates: Record<string, string>;
      }[];
      expect(responses).toHaveLength(1);
      const [response] = responses;
      expect(response?.SelectionPattern).toBeUndefined();
      expect(response?.StatusCode).toBe('405');
      expect(response?.ResponseParameters).toEqual({
        'method.response.header.Content-Type': "'application/problem+json'",
        'method.response.header.Cache-Control': "'no-store'",
        'method.response.header.Allow': `'${methodsOf(path).join(', ')}'`,
      });
      const body = JSON.parse((response?.ResponseTemplates['application/json'] ?? '').replace('$context.requestId', 'abc-123')) as Record<
        string,
        unknown
      >;
      expect(body).toEqual({
        type: '/problems/method-not-allowed',
        title: 'Method not allowed',
        status: 405,
        detail: expect.any(String),
        code: 'METHOD_NOT_ALLOWED',
        requestId: 'abc-123',
      });
      expect(methodResponses).toEqual([
        {
          StatusCode: '405',
          ResponseParameters: {
            'method.response.header.Content-Type': true,
            'method.response.header.Cache-Control': true,
            'method.response.header.Allow': true,
          },
        },
      ]);
    },
  );
});

describe("API Gateway's own errors", () => {
  const responses = () =>
    Object.fromEntries(
      Object.values(resourcesOfType(synth().template, 'AWS::ApiGateway::GatewayResponse')).map((r) => [
        r.Properties.ResponseType as string,
        r.Properties,
      ]),
    );

  it.each([
    ['DEFAULT_4XX', '400', 'INVALID_REQUEST', '/problems/invalid-request'],
    ['MISSING_AUTHENTICATION_TOKEN', '404', 'NOT_FOUND', '/problems/not-found'],
    ['RESOURCE_NOT_FOUND', '404', 'NOT_FOUND', '/problems/not-found'],
    ['INVALID_SIGNATURE', '403', 'FORBIDDEN', '/problems/forbidden'],
    ['EXPIRED_TOKEN', '403', 'FORBIDDEN', '/problems/forbidden'],
    ['ACCESS_DENIED', '403', 'FORBIDDEN', '/problems/forbidden'],
    ['THROTTLED', '429', 'RATE_LIMITED', '/problems/rate-limited'],
    ['WAF_FILTERED', '403', 'FORBIDDEN', '/problems/forbidden'],
    ['REQUEST_TOO_LARGE', '413', 'PAYLOAD_TOO_LARGE', '/problems/payload-too-large'],
    ['UNSUPPORTED_MEDIA_TYPE', '415', 'UNSUPPORTED_MEDIA_TYPE', '/problems/unsupported-media-type'],
    ['INTEGRATION_TIMEOUT', '504', 'GATEWAY_TIMEOUT', '/problems/gateway-timeout'],
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
    expect(body).toEqual({
      type: problemType,
      title: expect.any(String),
      status: Number(status),
      detail: expect.any(String),
      code,
      requestId: 'abc-123',
    });
  });

  it('every other 5XX keeps the status API Gateway gives it (502, 500, ...): DEFAULT_5XX pins none, and its body claims none', () => {
    const response = responses().DEFAULT_5XX;
    expect(response).toBeDefined();
    expect(response?.StatusCode).toBeUndefined();
    expect(response?.ResponseParameters).toMatchObject({ 'gatewayresponse.header.Content-Type': "'application/problem+json'" });
    const body = JSON.parse(
      ((response?.ResponseTemplates as Record<string, string>)['application/json'] ?? '').replace('$context.requestId', 'abc-123'),
    ) as Record<string, unknown>;
    expect(body).toEqual({
      type: '/problems/internal',
      title: 'Internal error',
      detail: expect.any(String),
      code: 'INTERNAL',
      requestId: 'abc-123',
    });
  });

  it('no 5XX gateway response pins 500 over another status', () => {
    const pinned = Object.entries(responses()).filter(([, r]) => String(r.StatusCode ?? '').startsWith('5'));
    expect(pinned.map(([type, r]) => `${type} ${String(r.StatusCode)}`)).toEqual(['INTEGRATION_TIMEOUT 504']);
  });

  it('a throttled caller is told when to retry', () => {
    expect(responses().THROTTLED?.ResponseParameters).toMatchObject({ 'gatewayresponse.header.Retry-After': "'1'" });
  });

  it('every template is JSON once API Gateway fills in the request id', () => {
    for (const response of PROBLEM_GATEWAY_RESPONSES) {
      expect(() => JSON.parse(problemTemplate(response).replace('$context.requestId', 'x'))).not.toThrow();
    }
  });

  it('every response type the contract names is one API Gateway has (the CDK lists them all)', () => {
    const known = new Set(
      Object.values(ResponseType).flatMap((value: unknown) => (value instanceof ResponseType ? [value.responseType] : [])),
    );
    expect(known.size).toBeGreaterThanOrEqual(PROBLEM_GATEWAY_RESPONSES.length);
    expect(PROBLEM_GATEWAY_RESPONSES.map((r) => r.type).filter((type) => !known.has(type))).toEqual([]);
  });
});
