import { loadConfig } from '../../../lib/runtime/config.js';
import { API_FUNCTION_IDS, API_FUNCTIONS, memoryOf, ROUTE_MANIFEST } from '../../../infra/contract/route-table.js';
import { DEFAULT_STACK_CONFIG } from '../../../infra/contract/stack-config.js';
import { onlyResource, resourcesOfType, synth, type Resource } from './synth.js';

/** Every API function, by construct id (the route manifest's). */
const FUNCTIONS = API_FUNCTION_IDS.map((id) => API_FUNCTIONS[id].constructId);

function functionResource(id: string, context: Record<string, unknown> = {}): Resource {
  const entries = Object.entries(resourcesOfType(synth(context).template, 'AWS::Lambda::Function')).filter(([logicalId]) =>
    logicalId.startsWith(`${id}Function`),
  );
  expect(entries).toHaveLength(1);
  return entries[0]?.[1] as Resource;
}

describe('API functions', () => {
  it('there is exactly one API function per route, the record-upload function, the debtor verifier and CDK’s bucket-notification handler', () => {
    const ids = Object.keys(resourcesOfType(synth().template, 'AWS::Lambda::Function')).map((id) =>
      id.replace(/Function[0-9A-F]{8}$|[0-9A-F]{8}$/, ''),
    );
    expect(ids.sort()).toEqual(
      [
        ...FUNCTIONS,
        'RecordUpload',
        'DebtorVerifierWorker',
        'WebhookDeliveryFanOut',
        'WebhookDeliveryPlan',
        'WebhookDeliveryDeliver',
        'WebhookDeliverySweep',
        'BucketNotificationsHandler050a0587b7544547bf325f094a3db834',
      ].sort(),
    );
  });

  it('the invoice bucket reports invoice objects (live and test) created, removed or expired to the record-upload function, and nothing else', () => {
    const notifications = onlyResource(synth().template, 'Custom::S3BucketNotifications').Properties.NotificationConfiguration as {
      LambdaFunctionConfigurations: {
        Events: string[];
        Filter: { Key: { FilterRules: { Value: string }[] } };
        LambdaFunctionArn: unknown;
      }[];
    };
    const configurations = notifications.LambdaFunctionConfigurations;
    const byPrefix = (prefix: string) => configurations.filter((c) => c.Filter.Key.FilterRules[0]?.Value === prefix);
    for (const prefix of ['invoices/', 'test-invoices/']) {
      expect(
        byPrefix(prefix)
          .flatMap((c) => c.Events)
          .sort(),
      ).toEqual(['s3:LifecycleExpiration:*', 's3:ObjectCreated:*', 's3:ObjectRemoved:*']);
    }
    expect(configurations).toHaveLength(6);
    for (const c of configurations) {
      expect(c.Filter).toEqual({ Key: { FilterRules: [{ Name: 'prefix', Value: expect.stringMatching(/^(test-)?invoices\/$/) }] } });
      expect(c.LambdaFunctionArn).toEqual({ 'Fn::GetAtt': [expect.stringMatching(/^RecordUploadFunction/), 'Arn'] });
    }
    expect(Object.keys(notifications)).toEqual(['LambdaFunctionConfigurations']);
  });

  it.each(FUNCTIONS)('%s runs Node.js 24 on arm64 with active X-Ray tracing', (id) => {
    const { Properties: p } = functionResource(id);
    expect(p.Runtime).toBe('nodejs24.x');
    expect(p.Architectures).toEqual(['arm64']);
    expect(p.TracingConfig).toEqual({ Mode: 'Active' });
    expect(p.Handler).toBe('index.handler');
  });

  it('create-cases gets a full vCPU (1769 MB) and 15 s; the read and upload functions 256 MB and 6 s', () => {
    expect(functionResource('CreateCases').Properties).toMatchObject({ MemorySize: 1769, Timeout: 15 });
    expect(functionResource('GetCase').Properties).toMatchObject({ MemorySize: 256, Timeout: 6 });
    expect(functionResource('CreateUpload').Properties).toMatchObject({ MemorySize: 256, Timeout: 6 });
  });

  it('each function has the timeout and memory setting of the route table the local server also reads', () => {
    for (const fn of Object.values(API_FUNCTIONS)) {
      expect(functionResource(fn.constructId).Properties).toMatchObject({
        Timeout: fn.timeoutSeconds,
        MemorySize: memoryOf(fn, DEFAULT_STACK_CONFIG),
      });
    }
  });

  it('memory sizes can be changed from the CDK context for the benchmark', () => {
    const context = { createCasesMemoryMb: '1024', functionMemoryMb: 512 };
    expect(functionResource('CreateCases', context).Properties.MemorySize).toBe(1024);
    expect(functionResource('GetCase', context).Properties.MemorySize).toBe(512);
  });

  it.each(FUNCTIONS)('%s reserves no concurrency', (id) => {
    expect(functionResource(id).Properties.ReservedConcurrentExecutions).toBeUndefined();
  });

  it.each(FUNCTIONS)('%s logs to its own log group, kept for 90 days by default', (id) => {
    const { template } = synth();
    const fn = functionResource(id);
    const logGroupId = (fn.Properties.LoggingConfig as { LogGroup: { Ref: string } }).LogGroup.Ref;
    expect(logGroupId).toMatch(new RegExp(`^${id}LogGroup`));
    const logGroup = resourcesOfType(template, 'AWS::Logs::LogGroup')[logGroupId];
    expect(logGroup?.Properties.RetentionInDays).toBe(90);
    expect(logGroup?.DeletionPolicy).toBe('Retain');
  });

  it.each(API_FUNCTION_IDS)('%s receives every setting lib/runtime/config.ts reads, and it parses', (fnId) => {
    const id = API_FUNCTIONS[fnId].constructId;
    const { grants } = ROUTE_MANIFEST[fnId];
    const variables = (functionResource(id).Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    expect(variables).toEqual({
      TABLE_NAME: { Ref: expect.stringMatching(/^DataStoresTable/) },
      BUCKET_NAME: { Ref: expect.stringMatching(/^DataStoresInvoiceBucket/) },
      IDEMPOTENCY_TTL_SECONDS: '86400',
      IDEMPOTENCY_CLAIM_HORIZON_SECONDS: '20',
      UPLOAD_URL_TTL_SECONDS: '900',
      POWERTOOLS_SERVICE_NAME: 'partner-case-api',
      POWERTOOLS_METRICS_NAMESPACE: 'PartnerCaseApi',
      POWERTOOLS_LOG_LEVEL: 'INFO',
      NODE_OPTIONS: '--enable-source-maps',
      // The secrets' ARNs (never their values) and the lanes' URLs only where the manifest grants them.
      ...(grants.cursorSecret ? { CURSOR_SECRET_ARN: { Ref: expect.stringMatching(/^CursorSecret/) } } : {}),
      ...(grants.webhookSecretKey ? { WEBHOOK_SECRET_KEY_ARN: { Ref: expect.stringMatching(/^WebhookSecretKey/) } } : {}),
      ...(grants.webhookRedeliveries
        ? {
            WEBHOOK_DELIVERY_QUEUE_URL: { Ref: expect.stringMatching(/^WebhookDeliveryFastLane/) },
            WEBHOOK_TEST_DELIVERY_QUEUE_URL: { Ref: expect.stringMatching(/^WebhookDeliveryTestFastLane/) },
          }
        : {}),
    });
    // What CloudFormation resolves each reference to.
    const resolved: Record<string, string> = {
      TABLE_NAME: 'table',
      BUCKET_NAME: 'bucket',
      CURSOR_SECRET_ARN: 'arn:aws:secretsmanager:eu-west-2:111111111111:secret:cursor-AbCdEf',
      WEBHOOK_SECRET_KEY_ARN: 'arn:aws:secretsmanager:eu-west-2:111111111111:secret:webhook-AbCdEf',
      WEBHOOK_DELIVERY_QUEUE_URL: 'https://sqs.eu-west-2.amazonaws.com/111111111111/fast',
      WEBHOOK_TEST_DELIVERY_QUEUE_URL: 'https://sqs.eu-west-2.amazonaws.com/111111111111/test-fast',
    };
    const deployed = {
      ...Object.fromEntries(Object.entries(variables).map(([name, value]) => [name, typeof value === 'string' ? value : resolved[name]])),
      AWS_REGION: 'eu-west-2',
    } as NodeJS.ProcessEnv;
    expect(loadConfig(deployed)).toMatchObject({
      idempotencyTtlSeconds: 86400,
      uploadUrlTtlSeconds: 900,
      claimHorizonSeconds: 20,
      local: false,
    });
  });

  it('the cursor secret and the webhook sealing key are generated by Secrets Manager; only the list function reads the first, only create, rotate and the webhook delivery function the second', () => {
    const { template } = synth();
    const secrets = resourcesOfType(template, 'AWS::SecretsManager::Secret');
    // The debtor verifier's Companies House key is issued by Companies House, not generated (test/unit/infra/debtor-verifier.test.ts).
    expect(Object.keys(secrets).sort()).toEqual([
      expect.stringMatching(/^CursorSecret/),
      expect.stringMatching(/^DebtorVerifierRegistryKey/),
      expect.stringMatching(/^WebhookSecretKey/),
    ]);
    for (const secret of Object.entries(secrets)
      .filter(([id]) => !id.startsWith('DebtorVerifier'))
      .map(([, s]) => s)) {
      expect(secret.Properties.GenerateSecretString).toMatchObject({ PasswordLength: 64 });
      expect(secret.Properties.SecretString).toBeUndefined();
    }
    const readersOf = (prefix: string) =>
      Object.entries(resourcesOfType(template, 'AWS::IAM::Policy'))
        .filter(([, policy]) => {
          const doc = JSON.stringify(policy.Properties.PolicyDocument);
          return doc.includes('secretsmanager:GetSecretValue') && new RegExp(`"Ref":"${prefix}`).test(doc);
        })
        .map(([logicalId]) => logicalId)
        .sort();
    expect(readersOf('CursorSecret')).toEqual([
      expect.stringMatching(/^ListCasesRole/),
      expect.stringMatching(/^ListEventsRole/),
      expect.stringMatching(/^ListWebhookDeliveriesRole/),
    ]);
    // The ping signs with the endpoint's secrets, so it opens them too.
    expect(readersOf('WebhookSecretKey')).toEqual([
      expect.stringMatching(/^CreateWebhookEndpointRole/),
      expect.stringMatching(/^PingWebhookEndpointRole/),
      expect.stringMatching(/^RotateWebhookEndpointSecretRole/),
      // The delivery function signs every attempt with the endpoint's secrets.
      expect.stringMatching(/^WebhookDeliveryDeliverRole/),
    ]);
  });

  it('the idempotency and upload-URL lifetimes come from the CDK context', () => {
    const variables = (
      functionResource('CreateCases', { idempotencyTtlSeconds: '3600', uploadUrlTtlSeconds: 300 }).Properties.Environment as {
        Variables: Record<string, unknown>;
      }
    ).Variables;
    expect(variables).toMatchObject({ IDEMPOTENCY_TTL_SECONDS: '3600', UPLOAD_URL_TTL_SECONDS: '300' });
  });

  it('log retention needs no custom resource (the log groups are explicit)', () => {
    expect(Object.keys(resourcesOfType(synth().template, 'Custom::LogRetention'))).toHaveLength(0);
  });
});
