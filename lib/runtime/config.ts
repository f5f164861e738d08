import * as z from 'zod/mini';
import { DEFAULT_REGISTRY_RATE_LIMIT, type RateLimitConfig } from '../cases/verification/rate-window.js';

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
  /** create-cases' timeout plus a margin (infra/contract/route-table.ts derives it from the route manifest, for the stack and locally). */
  IDEMPOTENCY_CLAIM_HORIZON_SECONDS: seconds(5, 16 * 60, 20),
  /**
   * The key material of list cursors, given directly (`npm start` and the tests generate one), or
   * the ARN of the Secrets Manager secret holding it (the stack), read once per cold start by the
   * list functions (cases, events, webhook deliveries: `cursorSecret` in the route manifest). Other
   * functions need neither.
   */
  CURSOR_SECRET: z.optional(z.string().check(z.minLength(32, { error: 'must be at least 32 characters' }))),
  CURSOR_SECRET_ARN: z.optional(z.string().check(z.startsWith('arn:', { error: 'must be a Secrets Manager secret ARN' }))),
  /** Set only locally: the SQS-compatible server's URL (fauxqs). */
  SQS_ENDPOINT: endpoint,
  /** The verification worker's retry queue (functions/verify-debtors.ts); other functions need none. */
  // Not z.url(): the local SQS names its queues `http://sqs.<region>.127.0.0.1:<port>/…`, which it refuses.
  VERIFICATION_RETRY_QUEUE_URL: z.optional(z.string().check(z.regex(/^https?:\/\/\S+$/, { error: 'must be a queue URL' }))),
  /**
   * The key that seals webhook endpoint secrets (lib/adapters/webhooks/secret-box.ts): key material
   * given directly (npm start, the tests), or the ARN of the Secrets Manager secret
   * holding it (the stack). Only the functions that seal or open them are given either (`webhookSecretKey` in the route
   * manifest: create, change, ping; and the delivery worker).
   */
  WEBHOOK_SECRET_KEY: z.optional(z.string().check(z.minLength(32, { error: 'must be at least 32 characters' }))),
  WEBHOOK_SECRET_KEY_ARN: z.optional(z.string().check(z.startsWith('arn:', { error: 'must be a Secrets Manager secret ARN' }))),
  /**
   * The webhook delivery queues (docs/webhooks-design.md): per mode a fast lane and a slow lane
   * (deliveries in sustained failure), live (`WEBHOOK_DELIVERY_QUEUE_URL`, `WEBHOOK_SLOW_QUEUE_URL`)
   * and test (`WEBHOOK_TEST_…`), and the dead-letter queue of failed deliveries. The fan-out, the
   * delivery function, the sweeper and the redeliver route are given the ones they use; others none.
   */
  WEBHOOK_DELIVERY_QUEUE_URL: z.optional(z.string().check(z.regex(/^https?:\/\/\S+$/, { error: 'must be a queue URL' }))),
  WEBHOOK_SLOW_QUEUE_URL: z.optional(z.string().check(z.regex(/^https?:\/\/\S+$/, { error: 'must be a queue URL' }))),
  WEBHOOK_TEST_DELIVERY_QUEUE_URL: z.optional(z.string().check(z.regex(/^https?:\/\/\S+$/, { error: 'must be a queue URL' }))),
  WEBHOOK_TEST_SLOW_QUEUE_URL: z.optional(z.string().check(z.regex(/^https?:\/\/\S+$/, { error: 'must be a queue URL' }))),
  /**
   * The webhook planning queues, live and test (docs/webhooks-design.md, "Planning: at once or on the fair
   * queue"): the fan-out sends each large company-and-mode slice of a stream batch to its mode's; only the fan-out
   * is given them.
   */
  WEBHOOK_PLANNING_QUEUE_URL: z.optional(z.string().check(z.regex(/^https?:\/\/\S+$/, { error: 'must be a queue URL' }))),
  WEBHOOK_TEST_PLANNING_QUEUE_URL: z.optional(z.string().check(z.regex(/^https?:\/\/\S+$/, { error: 'must be a queue URL' }))),
  /** `true` only under npm start: webhook endpoints may point at localhost (endpoint-url.ts). Never set by the stack. */
  WEBHOOK_ALLOW_LOCAL_URLS: z.optional(z.enum(['true', 'false'], { error: 'must be true or false' })),
  /**
   * Local only (the tests' and the bench's loopback DNS server): the name servers the webhook
   * resolver asks (lib/adapters/webhooks/dns-resolver.ts), `ip` or `ip:port`, comma-separated.
   * Unset: the system's (resolv.conf). Refused beside a deployed stack's settings (no local store).
   */
  WEBHOOK_DNS_SERVERS: z.optional(
    z.string().check(z.regex(/^[^\s,]+(,[^\s,]+)*$/, { error: 'must be name servers (ip or ip:port), comma-separated' })),
  ),
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
  /** The verification worker's settings (functions/verify-debtors.ts); no other function reads them. */
  sqsEndpoint?: string | undefined;
  verificationRetryQueueUrl?: string | undefined;
  webhookDeliveryQueueUrl?: string | undefined;
  webhookSlowQueueUrl?: string | undefined;
  webhookTestDeliveryQueueUrl?: string | undefined;
  webhookTestSlowQueueUrl?: string | undefined;
  webhookPlanningQueueUrl?: string | undefined;
  webhookTestPlanningQueueUrl?: string | undefined;
  webhookSecretKey: string | undefined;
  webhookSecretKeyArn: string | undefined;
  /** npm start only: loopback webhook URLs accepted. */
  webhookAllowLocalUrls: boolean;
  /** Local only: the name servers webhook host names are resolved with; the system's when undefined. */
  webhookDnsServers?: string[] | undefined;
  /** True when talking to local stand-ins: static dummy credentials, path-style S3. */
  local: boolean;
}

/** The environment read through its schema; every problem named in one error. */
function parseEnvironment<T>(envSchema: z.ZodMiniType<T>, env: NodeJS.ProcessEnv): T {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`Invalid configuration: ${problems}`);
  }
  return parsed.data;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const e = parseEnvironment(schema, env);
  const local = Boolean(e.DYNAMODB_ENDPOINT ?? e.S3_ENDPOINT);
  if (e.WEBHOOK_DNS_SERVERS !== undefined && !local)
    throw new Error('Invalid configuration: WEBHOOK_DNS_SERVERS is for the local world only (DYNAMODB_ENDPOINT or S3_ENDPOINT unset)');
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
    sqsEndpoint: e.SQS_ENDPOINT,
    verificationRetryQueueUrl: e.VERIFICATION_RETRY_QUEUE_URL,
    webhookDeliveryQueueUrl: e.WEBHOOK_DELIVERY_QUEUE_URL,
    webhookSlowQueueUrl: e.WEBHOOK_SLOW_QUEUE_URL,
    webhookTestDeliveryQueueUrl: e.WEBHOOK_TEST_DELIVERY_QUEUE_URL,
    webhookTestSlowQueueUrl: e.WEBHOOK_TEST_SLOW_QUEUE_URL,
    webhookPlanningQueueUrl: e.WEBHOOK_PLANNING_QUEUE_URL,
    webhookTestPlanningQueueUrl: e.WEBHOOK_TEST_PLANNING_QUEUE_URL,
    webhookSecretKey: e.WEBHOOK_SECRET_KEY,
    webhookSecretKeyArn: e.WEBHOOK_SECRET_KEY_ARN,
    webhookAllowLocalUrls: e.WEBHOOK_ALLOW_LOCAL_URLS === 'true',
    webhookDnsServers: e.WEBHOOK_DNS_SERVERS?.split(','),
    local,
  };
}

let cached: AppConfig | undefined;

/** The process-wide configuration; parsed on first use, then reused. */
export function config(): AppConfig {
  cached ??= loadConfig();
  return cached;
}

/**
 * The debtor verifier's registry settings (issue 23), read once per process by the worker only,
 * apart from AppConfig so that no other function needs them. The rate limit must keep the key
 * under Companies House's 600 requests per 5 minutes: at most 600 per window, and a window of at
 * least 5 minutes (a shorter one with the same limit would allow more within 5 minutes).
 */
const registrySchema = z.object({
  REGISTRY_RATE_LIMIT: z._default(
    z.coerce.number({ error: 'must be a number of requests' }).check(
      z.refine((n) => Number.isInteger(n), { error: 'must be a whole number of requests' }),
      z.minimum(1, { error: 'must be at least 1' }),
      z.maximum(600, { error: 'must be at most 600 (the registry allows 600 per 5 minutes)' }),
    ),
    DEFAULT_REGISTRY_RATE_LIMIT.limit,
  ),
  REGISTRY_RATE_WINDOW_SECONDS: seconds(300, 3600, DEFAULT_REGISTRY_RATE_LIMIT.windowMs / 1000),
  /** Unset in AWS (the adapter's default, the real API); `npm start` points it at the local stand-in. */
  COMPANIES_HOUSE_BASE_URL: endpoint,
  /** The API key itself: only locally (the stand-in's key). */
  COMPANIES_HOUSE_API_KEY: z.optional(nonEmpty),
  /** The Secrets Manager secret (name or ARN) holding the key as its SecretString: the stack sets it. */
  COMPANIES_HOUSE_API_KEY_SECRET: z.optional(nonEmpty),
});

export interface RegistryConfig {
  rateLimit: RateLimitConfig;
  baseUrl: string | undefined;
  apiKey: string | undefined;
  apiKeySecret: string | undefined;
}

export function loadRegistryConfig(env: NodeJS.ProcessEnv = process.env): RegistryConfig {
  const e = parseEnvironment(registrySchema, env);
  if (e.COMPANIES_HOUSE_API_KEY === undefined && e.COMPANIES_HOUSE_API_KEY_SECRET === undefined)
    throw new Error('Invalid configuration: COMPANIES_HOUSE_API_KEY or COMPANIES_HOUSE_API_KEY_SECRET is required by the verifier');
  return {
    rateLimit: { ...DEFAULT_REGISTRY_RATE_LIMIT, limit: e.REGISTRY_RATE_LIMIT, windowMs: e.REGISTRY_RATE_WINDOW_SECONDS * 1000 },
    baseUrl: e.COMPANIES_HOUSE_BASE_URL,
    apiKey: e.COMPANIES_HOUSE_API_KEY,
    apiKeySecret: e.COMPANIES_HOUSE_API_KEY_SECRET,
  };
}

let cachedRegistry: RegistryConfig | undefined;

/** The verifier's registry settings; parsed on first use, then reused. */
export function registryConfig(): RegistryConfig {
  cachedRegistry ??= loadRegistryConfig();
  return cachedRegistry;
}
