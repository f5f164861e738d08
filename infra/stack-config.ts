import { RetentionDays } from 'aws-cdk-lib/aws-logs';

/**
 * Every deploy-time setting of the stack, read once from CDK context (`cdk.json` or `-c key=value`)
 * with the defaults below. Values given on the command line arrive as strings, so each one is
 * parsed and range-checked here, and a bad value fails the synth with a message naming the key.
 * `docs/deploy.md` lists every key; `cdk.json` repeats the defaults so they are visible there.
 */
export interface StackConfig {
  /** CloudFormation stack name. */
  stackName: string;
  /** API Gateway stage; the base URL is `https://<api>.execute-api.<region>.amazonaws.com/<stage>/`. */
  stageName: string;
  /** Stage-wide steady-state request rate (requests per second) and burst. */
  throttleRate: number;
  throttleBurst: number;
  /** Create and associate the WAF web ACL. */
  waf: boolean;
  /** WAF rate-based limits, requests per 5-minute window. */
  wafRateLimitPerKey: number;
  wafRateLimitPerIp: number;
  /** Lambda environment: how long an Idempotency-Key stays claimed, and presigned-URL lifetime. */
  idempotencyTtlSeconds: number;
  uploadUrlTtlSeconds: number;
  /** Retention of the Lambda and API Gateway log groups. */
  logRetentionDays: RetentionDays;
  /** Lifetime of S3 server access log objects in the log bucket. */
  accessLogExpirationDays: number;
  /** Invoice bucket: days before a replaced or deleted invoice version is removed. */
  noncurrentVersionExpirationDays: number;
  /** Invoice bucket: days before a current invoice object expires; undefined keeps them. */
  invoiceExpirationDays: number | undefined;
  /** E-mail address subscribed to the alarm topic; undefined subscribes nobody. */
  alarmEmail: string | undefined;
  /** Alarm thresholds: p99 latency of the stage (ms) and the 5XX share of requests (0..1). */
  alarmLatencyP99Ms: number;
  alarmServerErrorRate: number;
  /**
   * Create the account-level role that lets API Gateway write execution logs. Set false when the
   * account already has one configured (it is a per-account, per-region setting).
   */
  apiGatewayCloudWatchRole: boolean;
  /**
   * Lambda memory in MB. Lambda gives CPU in proportion to memory, and a 100-case batch is CPU
   * bound in the SDK (about 120 ms of CPU, docs/performance.md), so create-cases gets one full
   * vCPU (1769 MB); peak RSS is far below either setting (114 MB for a 100-case batch).
   */
  createCasesMemoryMb: number;
  functionMemoryMb: number;
}

export const DEFAULT_STACK_CONFIG: StackConfig = {
  stackName: 'PartnerCaseApi',
  stageName: 'prod',
  throttleRate: 50,
  throttleBurst: 100,
  waf: true,
  wafRateLimitPerKey: 3000,
  wafRateLimitPerIp: 6000,
  idempotencyTtlSeconds: 24 * 3600,
  uploadUrlTtlSeconds: 15 * 60,
  logRetentionDays: RetentionDays.THREE_MONTHS,
  accessLogExpirationDays: 365,
  noncurrentVersionExpirationDays: 30,
  invoiceExpirationDays: undefined,
  alarmEmail: undefined,
  alarmLatencyP99Ms: 3000,
  alarmServerErrorRate: 0.01,
  apiGatewayCloudWatchRole: true,
  createCasesMemoryMb: 1769,
  functionMemoryMb: 256,
};

/** Anything with a context lookup: a construct's `node`, or a plain map in tests. */
export interface ContextSource {
  tryGetContext(key: string): unknown;
}

const RETENTION_VALUES = new Set(
  Object.values(RetentionDays).filter((v): v is number => typeof v === 'number'),
);

class ContextReader {
  constructor(private readonly source: ContextSource) {}

  private raw(key: string): unknown {
    const value = this.source.tryGetContext(key);
    return value === '' || value === null ? undefined : value;
  }

  string(key: keyof StackConfig, fallback: string, pattern?: RegExp): string {
    const value = this.raw(key);
    if (value === undefined) return fallback;
    if (typeof value !== 'string' || (pattern && !pattern.test(value))) {
      throw new Error(`Context "${key}" must be a string${pattern ? ` matching ${pattern}` : ''}, got ${JSON.stringify(value)}`);
    }
    return value;
  }

  optionalString(key: keyof StackConfig, pattern: RegExp): string | undefined {
    const value = this.raw(key);
    if (value === undefined) return undefined;
    return this.string(key, '', pattern);
  }

  number(key: keyof StackConfig, fallback: number, min: number, max: number, integer = true): number {
    const value = this.raw(key);
    if (value === undefined) return fallback;
    const n = typeof value === 'number' ? value : typeof value === 'string' ? Number(value.trim()) : Number.NaN;
    if (!Number.isFinite(n) || n < min || n > max || (integer && !Number.isInteger(n))) {
      throw new Error(
        `Context "${key}" must be ${integer ? 'an integer' : 'a number'} from ${min} to ${max}, got ${JSON.stringify(value)}`,
      );
    }
    return n;
  }

  optionalNumber(key: keyof StackConfig, min: number, max: number): number | undefined {
    return this.raw(key) === undefined ? undefined : this.number(key, 0, min, max);
  }

  boolean(key: keyof StackConfig, fallback: boolean): boolean {
    const value = this.raw(key);
    if (value === undefined) return fallback;
    if (value === true || value === 'true') return true;
    if (value === false || value === 'false') return false;
    throw new Error(`Context "${key}" must be true or false, got ${JSON.stringify(value)}`);
  }
}

/** Reads and validates the stack configuration from CDK context. */
export function readStackConfig(source: ContextSource): StackConfig {
  const r = new ContextReader(source);
  const d = DEFAULT_STACK_CONFIG;

  const logRetentionDays = r.number('logRetentionDays', d.logRetentionDays, 1, 9999);
  if (!RETENTION_VALUES.has(logRetentionDays)) {
    throw new Error(
      `Context "logRetentionDays" must be one of CloudWatch's retention periods (${[...RETENTION_VALUES].join(', ')}), got ${logRetentionDays}`,
    );
  }

  const config: StackConfig = {
    stackName: r.string('stackName', d.stackName, /^[A-Za-z][A-Za-z0-9-]{0,127}$/),
    // API Gateway stage names: letters, digits, hyphen and underscore.
    stageName: r.string('stageName', d.stageName, /^[A-Za-z0-9_-]{1,128}$/),
    throttleRate: r.number('throttleRate', d.throttleRate, 1, 10_000, false),
    throttleBurst: r.number('throttleBurst', d.throttleBurst, 1, 5_000),
    waf: r.boolean('waf', d.waf),
    // WAF accepts 10 to 2,000,000,000 per evaluation window.
    wafRateLimitPerKey: r.number('wafRateLimitPerKey', d.wafRateLimitPerKey, 10, 2_000_000_000),
    wafRateLimitPerIp: r.number('wafRateLimitPerIp', d.wafRateLimitPerIp, 10, 2_000_000_000),
    // The same bounds lib/config.ts enforces at cold start, so a bad value fails here, not there.
    idempotencyTtlSeconds: r.number('idempotencyTtlSeconds', d.idempotencyTtlSeconds, 60, 30 * 24 * 3600),
    uploadUrlTtlSeconds: r.number('uploadUrlTtlSeconds', d.uploadUrlTtlSeconds, 60, 3600),
    logRetentionDays: logRetentionDays as RetentionDays,
    accessLogExpirationDays: r.number('accessLogExpirationDays', d.accessLogExpirationDays, 1, 36_500),
    noncurrentVersionExpirationDays: r.number('noncurrentVersionExpirationDays', d.noncurrentVersionExpirationDays, 1, 36_500),
    invoiceExpirationDays: r.optionalNumber('invoiceExpirationDays', 1, 36_500),
    alarmEmail: r.optionalString('alarmEmail', /^[^\s@]+@[^\s@]+\.[^\s@]+$/),
    alarmLatencyP99Ms: r.number('alarmLatencyP99Ms', d.alarmLatencyP99Ms, 50, 29_000),
    alarmServerErrorRate: r.number('alarmServerErrorRate', d.alarmServerErrorRate, 0.0001, 1, false),
    apiGatewayCloudWatchRole: r.boolean('apiGatewayCloudWatchRole', d.apiGatewayCloudWatchRole),
    createCasesMemoryMb: r.number('createCasesMemoryMb', d.createCasesMemoryMb, 128, 10_240),
    functionMemoryMb: r.number('functionMemoryMb', d.functionMemoryMb, 128, 10_240),
  };
  if (config.throttleBurst < Math.ceil(config.throttleRate)) {
    throw new Error(`Context "throttleBurst" (${config.throttleBurst}) must be at least "throttleRate" (${config.throttleRate})`);
  }
  return config;
}

/** The environment every API function reads (see lib/config.ts). */
export function functionEnvironment(
  config: StackConfig,
  resources: { tableName: string; bucketName: string },
): Record<string, string> {
  return {
    TABLE_NAME: resources.tableName,
    BUCKET_NAME: resources.bucketName,
    IDEMPOTENCY_TTL_SECONDS: String(config.idempotencyTtlSeconds),
    UPLOAD_URL_TTL_SECONDS: String(config.uploadUrlTtlSeconds),
    POWERTOOLS_SERVICE_NAME: 'partner-case-api',
    POWERTOOLS_METRICS_NAMESPACE: 'PartnerCaseApi',
    POWERTOOLS_LOG_LEVEL: 'INFO',
    // Stack traces point at the TypeScript sources through the bundled source map.
    NODE_OPTIONS: '--enable-source-maps',
  };
}
