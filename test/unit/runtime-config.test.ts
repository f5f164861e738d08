import { loadConfig } from '../../lib/runtime/config.js';

const minimal = { TABLE_NAME: 'partner-cases', BUCKET_NAME: 'invoices' };

describe('the configuration a function reads at cold start', () => {
  it('takes the defaults for what the environment leaves out', () => {
    expect(loadConfig(minimal)).toEqual({
      tableName: 'partner-cases',
      bucketName: 'invoices',
      region: 'eu-west-2',
      dynamoEndpoint: undefined,
      s3Endpoint: undefined,
      idempotencyTtlSeconds: 86400,
      uploadUrlTtlSeconds: 900,
      claimHorizonSeconds: 20,
      cursorSecret: undefined,
      cursorSecretArn: undefined,
      webhookSecretKey: undefined,
      webhookSecretKeyArn: undefined,
      webhookAllowLocalUrls: false,
      local: false,
    });
  });

  it('reads numbers from their strings and the local endpoints as URLs', () => {
    const cfg = loadConfig({
      ...minimal,
      AWS_REGION: 'eu-west-1',
      IDEMPOTENCY_TTL_SECONDS: '3600',
      UPLOAD_URL_TTL_SECONDS: '60',
      IDEMPOTENCY_CLAIM_HORIZON_SECONDS: '35',
      DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000',
      CURSOR_SECRET: 'x'.repeat(32),
    });
    expect(cfg).toMatchObject({
      region: 'eu-west-1',
      idempotencyTtlSeconds: 3600,
      uploadUrlTtlSeconds: 60,
      claimHorizonSeconds: 35,
      dynamoEndpoint: 'http://127.0.0.1:8000',
      local: true,
      cursorSecret: 'x'.repeat(32),
    });
  });

  it('reads the local world’s webhook name servers, in order', () => {
    const cfg = loadConfig({ ...minimal, DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000', WEBHOOK_DNS_SERVERS: '127.0.0.1:5353,[::1]:53' });
    expect(cfg.webhookDnsServers).toEqual(['127.0.0.1:5353', '[::1]:53']);
  });

  it.each([
    [{ BUCKET_NAME: 'invoices' }, 'TABLE_NAME: must be set'],
    [{ ...minimal, TABLE_NAME: '' }, 'TABLE_NAME: must not be empty'],
    [{ ...minimal, AWS_REGION: '' }, 'AWS_REGION: must not be empty'],
    [{ ...minimal, DYNAMODB_ENDPOINT: 'not a url' }, 'DYNAMODB_ENDPOINT: must be a URL'],
    [{ ...minimal, IDEMPOTENCY_TTL_SECONDS: 'soon' }, 'IDEMPOTENCY_TTL_SECONDS: must be a number of seconds'],
    [{ ...minimal, IDEMPOTENCY_TTL_SECONDS: '59' }, 'IDEMPOTENCY_TTL_SECONDS: must be at least 60'],
    [{ ...minimal, UPLOAD_URL_TTL_SECONDS: '3601' }, 'UPLOAD_URL_TTL_SECONDS: must be at most 3600'],
    [{ ...minimal, IDEMPOTENCY_CLAIM_HORIZON_SECONDS: '20.5' }, 'IDEMPOTENCY_CLAIM_HORIZON_SECONDS: must be a whole number of seconds'],
    [{ ...minimal, CURSOR_SECRET: 'short' }, 'CURSOR_SECRET: must be at least 32 characters'],
    [{ ...minimal, CURSOR_SECRET_ARN: 'secret-name' }, 'CURSOR_SECRET_ARN: must be a Secrets Manager secret ARN'],
    [{ ...minimal, WEBHOOK_DNS_SERVERS: '127.0.0.1:53' }, 'WEBHOOK_DNS_SERVERS is for the local world only'],
    [
      { ...minimal, DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000', WEBHOOK_DNS_SERVERS: '127.0.0.1:53, 127.0.0.2' },
      'WEBHOOK_DNS_SERVERS: must be name servers (ip or ip:port), comma-separated',
    ],
  ])('refuses %j, naming the variable', (env, message) => {
    expect(() => loadConfig(env)).toThrow(`Invalid configuration: ${message}`);
  });
});
