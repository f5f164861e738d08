import * as z from 'zod/mini';

/**
 * Configuration, read once per process (cold start) from the environment, failing fast with a
 * message naming the variable. The same shape is produced by the CDK stack (`infra/`) and by the
 * local stack, so a handler cannot tell where it runs except through these values.
 *
 * zod's mini API: this module is in every function's bundle, and a function that validates no
 * partner input with classic zod (get-case) then loads none of it; classic zod's first schemas
 * cost a cold start about 15 ms more (docs/performance.md, section 4).
 */
const nonEmpty = z.string({ error: 'must be set' }).check(z.minLength(1, { error: 'must not be empty' }));
const endpoint = z.optional(z.url({ error: 'must be a URL' }));
function seconds(min: number, max: number, fallback: number) {
  return z._default(
    z.coerce.number({ error: 'must be a number of seconds' }).check(
      z.refine((n) => Number.isInteger(n), { error: 'must be a whole number of seconds' }),
      z.minimum(min, { error: `must be at least ${min}` }),
      z.maximum(max, { error: `must be at most ${max}` }),
    ),
    fallback,
  );
}

const schema = z.object({
  TABLE_NAME: nonEmpty,
  BUCKET_NAME: nonEmpty,
  AWS_REGION: z._default(nonEmpty, 'eu-west-2'),
  /** Set only locally: DynamoDB Local's URL. */
  DYNAMODB_ENDPOINT: endpoint,
  /** Set only locally: the S3-compatible store's URL (s3rver). Presigned URLs are signed for it. */
  S3_ENDPOINT: endpoint,
  IDEMPOTENCY_TTL_SECONDS: seconds(60, 30 * 24 * 3600, 24 * 3600),
  UPLOAD_URL_TTL_SECONDS: seconds(60, 3600, 15 * 60),
  /** create-cases' timeout plus a margin (infra/contract/route-table.ts sets it in the stack and locally). */
  IDEMPOTENCY_CLAIM_HORIZON_SECONDS: seconds(5, 16 * 60, 20),
  /**
   * The key material of list cursors, given directly (`npm start` and the tests generate one), or
   * the ARN of the Secrets Manager secret holding it (the stack), read once per cold start by the
   * list function. Other functions need neither.
   */
  CURSOR_SECRET: z.optional(z.string().check(z.minLength(32, { error: 'must be at least 32 characters' }))),
  CURSOR_SECRET_ARN: z.optional(z.string().check(z.startsWith('arn:', { error: 'must be a Secrets Manager secret ARN' }))),
  /**
   * The key that seals webhook endpoint secrets (lib/adapters/webhooks/secret-box.ts): key material
   * given directly (npm start, the tests), or the ARN of the Secrets Manager secret
   * holding it (the stack). Only the functions that create or rotate secrets are given either.
   */
  WEBHOOK_SECRET_KEY: z.optional(z.string().check(z.minLength(32, { error: 'must be at least 32 characters' }))),
  WEBHOOK_SECRET_KEY_ARN: z.optional(z.string().check(z.startsWith('arn:', { error: 'must be a Secrets Manager secret ARN' }))),
  /** `true` only under npm start: webhook endpoints may point at localhost (endpoint-url.ts). Never set by the stack. */
  WEBHOOK_ALLOW_LOCAL_URLS: z.optional(z.enum(['true', 'false'], { error: 'must be true or false' })),
});

export interface AppConfig {
  tableName: string;
  bucketName: string;
  region: string;
  dynamoEndpoint: string | undefined;
  s3Endpoint: string | undefined;
  idempotencyTtlSeconds: number;
  uploadUrlTtlSeconds: number;
  claimHorizonSeconds: number;
  cursorSecret: string | undefined;
  cursorSecretArn: string | undefined;
  webhookSecretKey: string | undefined;
  webhookSecretKeyArn: string | undefined;
  /** npm start only: loopback webhook URLs accepted. */
  webhookAllowLocalUrls: boolean;
  /** True when talking to local stand-ins: static dummy credentials, path-style S3. */
  local: boolean;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`Invalid configuration: ${problems}`);
  }
  const e = parsed.data;
  return {
    tableName: e.TABLE_NAME,
    bucketName: e.BUCKET_NAME,
    region: e.AWS_REGION,
    dynamoEndpoint: e.DYNAMODB_ENDPOINT,
    s3Endpoint: e.S3_ENDPOINT,
    idempotencyTtlSeconds: e.IDEMPOTENCY_TTL_SECONDS,
    uploadUrlTtlSeconds: e.UPLOAD_URL_TTL_SECONDS,
    claimHorizonSeconds: e.IDEMPOTENCY_CLAIM_HORIZON_SECONDS,
    cursorSecret: e.CURSOR_SECRET,
    cursorSecretArn: e.CURSOR_SECRET_ARN,
    webhookSecretKey: e.WEBHOOK_SECRET_KEY,
    webhookSecretKeyArn: e.WEBHOOK_SECRET_KEY_ARN,
    webhookAllowLocalUrls: e.WEBHOOK_ALLOW_LOCAL_URLS === 'true',
    local: Boolean(e.DYNAMODB_ENDPOINT ?? e.S3_ENDPOINT),
  };
}

let cached: AppConfig | undefined;

/** The process-wide configuration; parsed on first use, then reused. */
export function config(): AppConfig {
  cached ??= loadConfig();
  return cached;
}
