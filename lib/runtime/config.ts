import * as z from 'zod';

/**
 * Configuration, read once per process (cold start) from the environment, failing fast with a
 * message naming the variable. The same shape is produced by the CDK stack (`infra/`) and by the
 * local stack, so a handler cannot tell where it runs except through these values.
 */
const schema = z.object({
  TABLE_NAME: z.string().min(1),
  BUCKET_NAME: z.string().min(1),
  AWS_REGION: z.string().min(1).default('eu-west-2'),
  /** Set only locally: DynamoDB Local's URL. */
  DYNAMODB_ENDPOINT: z.url().optional(),
  /** Set only locally: the S3-compatible store's URL (s3rver). Presigned URLs are signed for it. */
  S3_ENDPOINT: z.url().optional(),
  IDEMPOTENCY_TTL_SECONDS: z.coerce.number().int().min(60).max(30 * 24 * 3600).default(24 * 3600),
  UPLOAD_URL_TTL_SECONDS: z.coerce.number().int().min(60).max(3600).default(15 * 60),
  /** create-cases' timeout plus a margin (infra/route-table.ts sets it in the stack and locally). */
  IDEMPOTENCY_CLAIM_HORIZON_SECONDS: z.coerce.number().int().min(5).max(16 * 60).default(20),
  /**
   * The key material of list cursors, given directly (`npm start` and the tests generate one), or
   * the ARN of the Secrets Manager secret holding it (the stack), read once per cold start by the
   * list function. Other functions need neither.
   */
  CURSOR_SECRET: z.string().min(32, { error: 'must be at least 32 characters' }).optional(),
  CURSOR_SECRET_ARN: z.string().startsWith('arn:', { error: 'must be a Secrets Manager secret ARN' }).optional(),
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
    local: Boolean(e.DYNAMODB_ENDPOINT ?? e.S3_ENDPOINT),
  };
}

let cached: AppConfig | undefined;

/** The process-wide configuration; parsed on first use, then reused. */
export function config(): AppConfig {
  cached ??= loadConfig();
  return cached;
}
