/**
 * The stack's deploy-time settings (cdk.json context), read by the CDK app and mirrored by the local
 * server (`npm start` runs the dev stage's timeouts and memory). Plain data without CDK imports, so
 * the local tools load it cheaply; the stack hands these values to the CDK's own types.
 */

/** The deployment stages. Every synth and deploy names one (`-c stage=dev|prod`); there is no default. */
export const STAGES = ['dev', 'prod'] as const;
export type StageName = (typeof STAGES)[number];

/** Where a stage lives: `cdk.json` context `stages.<stage>`. */
export interface StageTarget {
  /** AWS account id (12 digits); `cdk deploy` refuses credentials for any other account. */
  account: string;
  region: string;
}

/**
 * The context keys a stage entry in `cdk.json` (`stages.<stage>`) may hold besides its account and
 * region: settings that differ per stage and must not depend on remembering a `-c` flag. A `-c`
 * value on the command line takes precedence over the stage entry.
 */
export const STAGE_ENTRY_KEYS = ['alarmEmail', 'domainName', 'certificateArn', 'internalPrincipals'] as const;

/**
 * Every deploy-time setting of the stack, read once from CDK context (`cdk.json` or `-c key=value`)
 * with the defaults below. Values given on the command line arrive as strings, so each one is
 * parsed and range-checked here, and a bad value fails the synth with a message naming the key.
 * `docs/deploy.md` lists every key; `cdk.json` repeats the defaults so they are visible there.
 */
export interface StackConfig extends StageIndependentConfig {
  /** The deployment stage (`-c stage=...`, required). */
  stage: StageName;
  /** The stage's pinned account and region (`cdk.json` `stages.<stage>`). */
  target: StageTarget;
  /** CloudFormation stack name: `<stackName context>-<stage>`, e.g. `PartnerCaseApi-prod`. */
  stackName: string;
  /** API Gateway stage; the base URL is `https://<api>.execute-api.<region>.amazonaws.com/<stage>/`. Defaults to the stage. */
  stageName: string;
  /** Prod stacks cannot be deleted until this is switched off by hand. */
  terminationProtection: boolean;
  /** E-mail address subscribed to the alarm topic; required for prod, optional elsewhere. */
  alarmEmail: string | undefined;
  /** Custom domain (with its ACM certificate in the stage's region); when set, the execute-api endpoint is disabled. */
  customDomain: { domainName: string; certificateArn: string } | undefined;
  /**
   * The IAM principals the API's resource policy lets call the internal routes (`/internal/v1/...`):
   * account roots (`arn:aws:iam::<account>:root`, any principal of that account its own IAM allows)
   * or role and user ARNs. Defaults to the stage's own account root. A principal of another account
   * also needs `execute-api:Invoke` in its own identity policy (docs/internal-api.md).
   */
  internalPrincipals: string[];
}

/** The settings that have a built-in default, the same for every stage. */
export interface StageIndependentConfig {
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
  /** Retention of the Lambda, API Gateway and WAF log groups: one of LOG_RETENTION_DAYS. */
  logRetentionDays: number;
  /** Lifetime of S3 server access log objects in the log bucket. */
  accessLogExpirationDays: number;
  /** Invoice bucket: days before a replaced or deleted invoice version is removed. */
  noncurrentVersionExpirationDays: number;
  /** Invoice bucket: days before a current invoice object expires; undefined keeps them. */
  invoiceExpirationDays: number | undefined;
  /** Alarm thresholds: p99 latency of the stage (ms) and the 5XX share of requests (0..1). */
  alarmLatencyP99Ms: number;
  alarmServerErrorRate: number;
  /** Alarm threshold: the 4XX share of requests (0..1), counted once a period has enough requests. */
  alarmClientErrorRate: number;
  /** Alarm threshold: requests WAF blocked in five minutes (any rule). */
  alarmWafBlockedRequests: number;
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

/** Base of the stack name; the stage is appended. */
export const DEFAULT_STACK_NAME = 'PartnerCaseApi';

export const DEFAULT_STACK_CONFIG: StageIndependentConfig = {
  throttleRate: 50,
  throttleBurst: 100,
  waf: true,
  wafRateLimitPerKey: 3000,
  wafRateLimitPerIp: 6000,
  idempotencyTtlSeconds: 24 * 3600,
  uploadUrlTtlSeconds: 15 * 60,
  logRetentionDays: 90,
  accessLogExpirationDays: 365,
  noncurrentVersionExpirationDays: 30,
  invoiceExpirationDays: undefined,
  alarmLatencyP99Ms: 3000,
  alarmServerErrorRate: 0.01,
  alarmClientErrorRate: 0.25,
  alarmWafBlockedRequests: 100,
  apiGatewayCloudWatchRole: true,
  createCasesMemoryMb: 1769,
  functionMemoryMb: 256,
};

/** Anything with a context lookup: a construct's `node`, or a plain map in tests. */
export interface ContextSource {
  tryGetContext(key: string): unknown;
}

/**
 * The retention periods CloudWatch Logs accepts, in days (9999: never expire), as the CDK's
 * `RetentionDays` lists them; a unit test holds the two equal.
 */
export const LOG_RETENTION_DAYS: readonly number[] = [
  1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653, 9999,
];

const RETENTION_VALUES = new Set(LOG_RETENTION_DAYS);

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const ACCOUNT = /^\d{12}$/;
const REGION = /^[a-z]{2}(-[a-z]+)+-\d$/;
// Lower-case host name with at least two labels; API Gateway refuses upper case in domain names.
const DOMAIN_NAME = /^(?=.{4,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;
const CERTIFICATE_ARN = /^arn:aws[a-z-]*:acm:[a-z0-9-]+:\d{12}:certificate\/[A-Za-z0-9-]+$/;
// An account root, a role or a user: what an API Gateway resource policy can name as a principal.
const IAM_PRINCIPAL_ARN = /^arn:aws[a-z-]*:iam::\d{12}:(root|(role|user)\/[\w+=,.@/-]{1,512})$/;

type ContextKey = keyof StageIndependentConfig | 'stackName' | 'stageName' | (typeof STAGE_ENTRY_KEYS)[number];

class ContextReader {
  constructor(
    private readonly source: ContextSource,
    /** The stage entry of `cdk.json`, consulted for STAGE_ENTRY_KEYS when the key is not set directly. */
    private readonly stageEntry: Record<string, unknown> = {},
  ) {}

  private raw(key: ContextKey): unknown {
    const blank = (v: unknown) => v === '' || v === null || v === undefined;
    const value = this.source.tryGetContext(key);
    if (!blank(value)) return value;
    const staged = (STAGE_ENTRY_KEYS as readonly string[]).includes(key) ? this.stageEntry[key] : undefined;
    return blank(staged) ? undefined : staged;
  }

  string(key: ContextKey, fallback: string, pattern?: RegExp): string {
    const value = this.raw(key);
    if (value === undefined) return fallback;
    if (typeof value !== 'string' || (pattern && !pattern.test(value))) {
      throw new Error(`Context "${key}" must be a string${pattern ? ` matching ${pattern}` : ''}, got ${JSON.stringify(value)}`);
    }
    return value;
  }

  optionalString(key: ContextKey, pattern: RegExp): string | undefined {
    const value = this.raw(key);
    if (value === undefined) return undefined;
    return this.string(key, '', pattern);
  }

  number(key: ContextKey, fallback: number, min: number, max: number, integer = true): number {
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

  /** A list of strings: a JSON array in cdk.json, or a comma-separated `-c` value. */
  optionalStringList(key: ContextKey, pattern: RegExp): string[] | undefined {
    const value = this.raw(key);
    if (value === undefined) return undefined;
    const list = typeof value === 'string' ? value.split(',').map((v) => v.trim()) : value;
    if (!Array.isArray(list) || list.length === 0 || list.some((v) => typeof v !== 'string' || !pattern.test(v))) {
      throw new Error(`Context "${key}" must be a non-empty list of strings matching ${pattern}, got ${JSON.stringify(value)}`);
    }
    return [...new Set(list as string[])];
  }

  optionalNumber(key: ContextKey, min: number, max: number): number | undefined {
    return this.raw(key) === undefined ? undefined : this.number(key, 0, min, max);
  }

  boolean(key: ContextKey, fallback: boolean): boolean {
    const value = this.raw(key);
    if (value === undefined) return fallback;
    if (value === true || value === 'true') return true;
    if (value === false || value === 'false') return false;
    throw new Error(`Context "${key}" must be true or false, got ${JSON.stringify(value)}`);
  }
}

/** The `-c stage=...` value, refused unless it is one of STAGES. */
export function readStage(source: ContextSource): StageName {
  const value = source.tryGetContext('stage');
  if (typeof value === 'string' && (STAGES as readonly string[]).includes(value)) return value as StageName;
  const allowed = STAGES.map((s) => `-c stage=${s}`).join(' or ');
  throw new Error(
    value === undefined || value === ''
      ? `Context "stage" is required: pass ${allowed} (allowed values: ${STAGES.join(', ')}). ` +
          'Every cdk command needs it, cdk bootstrap too (it runs the app): npx cdk bootstrap -c stage=<stage>.'
      : `Context "stage" must be one of ${STAGES.join(', ')}, got ${JSON.stringify(value)}.`,
  );
}

/** The stage's entry in context `stages` (cdk.json): its pinned account and region, and any STAGE_ENTRY_KEYS. */
function readStageEntry(source: ContextSource, stage: StageName): { target: StageTarget; entry: Record<string, unknown> } {
  const stages = source.tryGetContext('stages');
  const entry = stages !== null && typeof stages === 'object' ? (stages as Record<string, unknown>)[stage] : undefined;
  const where = `Context "stages.${stage}" (cdk.json)`;
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) {
    throw new Error(`${where} is missing: add { "account": "<12-digit account id>", "region": "<region>" } for stage ${stage}.`);
  }
  const record = entry as Record<string, unknown>;
  const allowed = new Set<string>(['account', 'region', ...STAGE_ENTRY_KEYS]);
  const unknown = Object.keys(record).filter((k) => !allowed.has(k));
  if (unknown.length > 0) {
    throw new Error(`${where} may only hold ${[...allowed].join(', ')}; unknown: ${unknown.join(', ')}.`);
  }
  const { account, region } = record;
  if (typeof account !== 'string' || !ACCOUNT.test(account)) {
    throw new Error(`${where} "account" must be a 12-digit AWS account id (a string), got ${JSON.stringify(account)}.`);
  }
  if (typeof region !== 'string' || !REGION.test(region)) {
    throw new Error(`${where} "region" must be an AWS region such as eu-west-2, got ${JSON.stringify(region)}.`);
  }
  return { target: { account, region }, entry: record };
}

/** Reads and validates the stack configuration from CDK context. */
export function readStackConfig(source: ContextSource): StackConfig {
  const stage = readStage(source);
  const { target, entry } = readStageEntry(source, stage);
  const r = new ContextReader(source, entry);
  const d = DEFAULT_STACK_CONFIG;

  const logRetentionDays = r.number('logRetentionDays', d.logRetentionDays, 1, 9999);
  if (!RETENTION_VALUES.has(logRetentionDays)) {
    throw new Error(
      `Context "logRetentionDays" must be one of CloudWatch's retention periods (${[...RETENTION_VALUES].join(', ')}), got ${logRetentionDays}`,
    );
  }

  const alarmEmail = r.optionalString('alarmEmail', EMAIL);
  // An alarm nobody receives is no alarm: production cannot be synthesised without a subscriber.
  if (stage === 'prod' && alarmEmail === undefined) {
    throw new Error(
      'Context "alarmEmail" is required for stage prod: pass -c alarmEmail=<on-call address> or set stages.prod.alarmEmail in cdk.json.',
    );
  }

  const domainName = r.optionalString('domainName', DOMAIN_NAME);
  const certificateArn = r.optionalString('certificateArn', CERTIFICATE_ARN);
  if ((domainName === undefined) !== (certificateArn === undefined)) {
    throw new Error('Context "domainName" and "certificateArn" go together: set both (a custom domain) or neither.');
  }
  if (certificateArn !== undefined && certificateArn.split(':')[3] !== target.region) {
    throw new Error(
      `Context "certificateArn" must be a certificate in the stage's region ${target.region} (regional endpoint), got ${certificateArn}`,
    );
  }

  const baseName = r.string('stackName', DEFAULT_STACK_NAME, /^[A-Za-z][A-Za-z0-9-]{0,100}$/);
  const config: StackConfig = {
    stage,
    target,
    stackName: `${baseName}-${stage}`,
    // API Gateway stage names: letters, digits, hyphen and underscore.
    stageName: r.string('stageName', stage, /^[A-Za-z0-9_-]{1,128}$/),
    terminationProtection: stage === 'prod',
    alarmEmail,
    customDomain: domainName !== undefined && certificateArn !== undefined ? { domainName, certificateArn } : undefined,
    internalPrincipals: r.optionalStringList('internalPrincipals', IAM_PRINCIPAL_ARN) ?? [
      `arn:${target.region.startsWith('cn-') ? 'aws-cn' : 'aws'}:iam::${target.account}:root`,
    ],
    throttleRate: r.number('throttleRate', d.throttleRate, 1, 10_000, false),
    throttleBurst: r.number('throttleBurst', d.throttleBurst, 1, 5_000),
    waf: r.boolean('waf', d.waf),
    // WAF accepts 10 to 2,000,000,000 per evaluation window.
    wafRateLimitPerKey: r.number('wafRateLimitPerKey', d.wafRateLimitPerKey, 10, 2_000_000_000),
    wafRateLimitPerIp: r.number('wafRateLimitPerIp', d.wafRateLimitPerIp, 10, 2_000_000_000),
    // The same bounds lib/runtime/config.ts enforces at cold start, so a bad value fails here, not there.
    idempotencyTtlSeconds: r.number('idempotencyTtlSeconds', d.idempotencyTtlSeconds, 60, 30 * 24 * 3600),
    uploadUrlTtlSeconds: r.number('uploadUrlTtlSeconds', d.uploadUrlTtlSeconds, 60, 3600),
    logRetentionDays,
    accessLogExpirationDays: r.number('accessLogExpirationDays', d.accessLogExpirationDays, 1, 36_500),
    noncurrentVersionExpirationDays: r.number('noncurrentVersionExpirationDays', d.noncurrentVersionExpirationDays, 1, 36_500),
    invoiceExpirationDays: r.optionalNumber('invoiceExpirationDays', 1, 36_500),
    alarmLatencyP99Ms: r.number('alarmLatencyP99Ms', d.alarmLatencyP99Ms, 50, 29_000),
    alarmServerErrorRate: r.number('alarmServerErrorRate', d.alarmServerErrorRate, 0.0001, 1, false),
    alarmClientErrorRate: r.number('alarmClientErrorRate', d.alarmClientErrorRate, 0.01, 1, false),
    alarmWafBlockedRequests: r.number('alarmWafBlockedRequests', d.alarmWafBlockedRequests, 1, 1_000_000_000),
    apiGatewayCloudWatchRole: r.boolean('apiGatewayCloudWatchRole', d.apiGatewayCloudWatchRole),
    createCasesMemoryMb: r.number('createCasesMemoryMb', d.createCasesMemoryMb, 128, 10_240),
    functionMemoryMb: r.number('functionMemoryMb', d.functionMemoryMb, 128, 10_240),
  };
  if (config.throttleBurst < Math.ceil(config.throttleRate)) {
    throw new Error(`Context "throttleBurst" (${config.throttleBurst}) must be at least "throttleRate" (${config.throttleRate})`);
  }
  return config;
}

/**
 * The namespace and `service` dimension of the service's own metrics (Powertools EMF adds the
 * service name as the `service` dimension). The functions get them through their environment, and
 * the alarms and the dashboard read the metrics with them.
 */
export const SERVICE_METRICS = { namespace: 'PartnerCaseApi', service: 'partner-case-api' } as const;

/** The environment every API function reads (see lib/runtime/config.ts). */
export function functionEnvironment(
  config: Pick<StageIndependentConfig, 'idempotencyTtlSeconds' | 'uploadUrlTtlSeconds'>,
  resources: { tableName: string; bucketName: string; claimHorizonSeconds: number },
): Record<string, string> {
  return {
    TABLE_NAME: resources.tableName,
    BUCKET_NAME: resources.bucketName,
    IDEMPOTENCY_CLAIM_HORIZON_SECONDS: String(resources.claimHorizonSeconds),
    IDEMPOTENCY_TTL_SECONDS: String(config.idempotencyTtlSeconds),
    UPLOAD_URL_TTL_SECONDS: String(config.uploadUrlTtlSeconds),
    POWERTOOLS_SERVICE_NAME: SERVICE_METRICS.service,
    POWERTOOLS_METRICS_NAMESPACE: SERVICE_METRICS.namespace,
    POWERTOOLS_LOG_LEVEL: 'INFO',
    // Stack traces point at the TypeScript sources through the bundled source map.
    NODE_OPTIONS: '--enable-source-maps',
  };
}
