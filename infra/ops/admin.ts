/**
 * Operator command: `npm run admin -- <command> [--json]`.
 *
 *   company create --name NAME [--auto-attestation]
 *   company list
 *   company set-auto-attestation --company ID --enabled true|false
 *   company clear-test-data --company ID
 *   key create --company ID --scopes cases:read,cases:write [--mode live|test]
 *   key list --company ID
 *   key revoke --key KEY_ID
 *   key rotate --key KEY_ID
 *   case confirm --company ID --case CASE_ID --by NAME [--email E] [--mode live|test]
 *   case recovery --company ID --case CASE_ID --type TYPE [--amount A --paid-at DATE] [--reference R]
 *                 [--reason R] [--note N] --by NAME --email E [--update-id ID] [--mode live|test]
 *   case reverify --case CASE_ID [--company ID] [--mode live|test]
 *   case reverify --pending-longer-than 24h [--company ID] [--mode live|test]
 *   webhook redeliver --company ID --endpoint ENDPOINT_ID --event EVENT_ID [--mode live|test]
 *
 * --key takes the key id or the full key; either way only the key id is ever printed.
 * Works against the local stack (DynamoDB Local of the running npm start of LOCAL_DATA_DIR, else
 * on DYNAMODB_LOCAL_PORT, default 8000) unless TABLE_NAME is set, in which case it uses that table in AWS_REGION with the operator's AWS
 * credentials (DYNAMODB_ENDPOINT, when set, overrides the endpoint, e.g. for tests). clear-test-data
 * also deletes test uploads: locally from the local S3, else from BUCKET_NAME (S3_ENDPOINT, when
 * set, overrides the endpoint). case reverify and webhook redeliver also use the queues (and the
 * registry) the worker and the redeliver route use: locally those of the running npm start, else
 * VERIFICATION_RETRY_QUEUE_URL and COMPANIES_HOUSE_API_KEY_SECRET, or WEBHOOK_DELIVERY_QUEUE_URL and WEBHOOK_TEST_DELIVERY_QUEUE_URL
 * (SQS_ENDPOINT, when set, overrides the SQS endpoint).
 * With --json the last line printed is one JSON object. Bad arguments: one line, exit 2;
 * refused operations (unknown company, revoked key, ...) and unreachable storage: one line, exit 1.
 */
import { randomUUID } from 'node:crypto';
import { userInfo } from 'node:os';
import { parseArgs } from 'node:util';
import { ListTablesCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { AccountsError, AccountsService } from '../../lib/accounts/accounts-service.js';
import { KEY_ID_PATTERN, KEY_PREFIX, parseApiKey } from '../../lib/auth/api-key.js';
import { isMode, MODES } from '../../lib/mode.js';
import { createS3Client } from '../../lib/adapters/s3/s3-client.js';
import { S3TestModeUploadStore } from '../../lib/adapters/s3/test-mode-upload-store.js';
import { DynamoTestModeItemStore } from '../../lib/adapters/dynamodb/test-mode-item-store.js';
import { parseScopeList } from '../../lib/auth/scopes.js';
import { loadConfig } from '../../lib/runtime/config.js';
import { createDocumentClient } from '../../lib/adapters/dynamodb/dynamo-client.js';
import { DynamoCaseChangeStore } from '../../lib/adapters/dynamodb/case-change-store.js';
import { CASE_ID_PATTERN } from '../../lib/cases/case-record.js';
import { confirmCases } from '../../lib/cases/change-case.js';
import { confirmedBySchema } from '../../lib/cases/confirmation-request.js';
import { DynamoRecoveryStore } from '../../lib/adapters/dynamodb/recovery-store.js';
import { applyRecoveryUpdate, type RecoveryUpdateOutcome } from '../../lib/cases/apply-recovery-update.js';
import { fieldErrorsOf, recoveryUpdateSchema, RECOVERY_UPDATE_TYPES, type RecoveryUpdate } from '../../lib/cases/recovery.js';
import { tableStores, type TableStores } from '../../lib/adapters/dynamodb/stores.js';
import { verificationAdapters } from '../../lib/adapters/production-verification-adapters.js';
import { webhookRedeliveryAdapters } from '../../lib/adapters/production-webhook-adapters.js';
import { casesLeftDraft, reverifyCase, type ReverifyOutcome } from '../../lib/cases/verification/reverify-case.js';
import { EVENT_ID_PATTERN } from '../../lib/cases/case-lifecycle.js';
import { CodedError } from '../../lib/errors.js';
import type { Mode } from '../../lib/mode.js';
import { loadRegistryConfig, type AppConfig } from '../../lib/runtime/config.js';
import { redeliverEvent, type RedeliverEventDeps } from '../../lib/webhooks/redeliver-event.js';
import { ENDPOINT_ID_PATTERN } from '../../lib/webhooks/webhook-endpoint.js';
import { LOCAL_DEFAULTS, localPorts, runningStackEngines, withRunningStackPorts } from '../local/local-ports.js';

class UsageError extends Error {}

const HELP = `Partner Case API admin

Usage: npm run admin -- <command> [options] [--json]

  company create --name NAME [--auto-attestation]
  company list
  company set-auto-attestation --company ID --enabled true|false
  company clear-test-data --company ID
                                 (deletes the company's test-mode cases, audit records, guards,
                                 Idempotency-Key claims and test uploads; never live data)
  key create --company ID --scopes cases:read,cases:write [--mode live|test]
                                 (default live; a test key starts pca_test_)
  key list --company ID
  key revoke --key KEY_ID        (or the full key: only its id is printed)
  key rotate --key KEY_ID
  case confirm --company ID --case CASE_ID --by NAME [--email E] [--mode live|test]
                                 (the confirmation the partner's dashboard makes, recorded with
                                 source "operator"; default live; exit 1 when the case is not
                                 found or not awaiting confirmation)
  case recovery --company ID --case CASE_ID --type recovery_started|payment_collected|closed
                [--amount 250.50 --paid-at YYYY-MM-DD [--reference R]] [--reason REASON] [--note N]
                --by NAME --email E [--update-id ID] [--mode live|test]
                                 (one update as the recovery back office sends it, recorded with
                                 source "operator": payment_collected takes --amount and --paid-at,
                                 closed takes --reason (PAID_IN_FULL, SETTLED, UNRECOVERABLE,
                                 DISPUTED, INSOLVENT); --update-id defaults to a new one, printed:
                                 run again with it and nothing is applied twice; default live; exit 1
                                 when the case is not found or the rules refuse the update)
  case reverify --case CASE_ID [--company ID] [--mode live|test]
  case reverify --pending-longer-than DURATION [--company ID] [--mode live|test]
                                 (cases left DRAFT, e.g. after the DebtorVerificationExhausted
                                 alarm: settles what the worker would settle and verifies a PENDING
                                 debtor afresh, as the worker does; DURATION like 90m, 24h, 3d;
                                 every company and both modes unless narrowed; safe to repeat;
                                 one line per case; exit 1 when a case is not found or fails)
  webhook redeliver --company ID --endpoint ENDPOINT_ID --event EVENT_ID [--mode live|test]
                                 (a new delivery of the event to the endpoint, as the partner's
                                 POST .../redeliver makes it; no partner key needed; default live)

Target: the local stack by default (the running npm start of LOCAL_DATA_DIR, default .local, on
whatever ports it uses; else DynamoDB Local on DYNAMODB_LOCAL_PORT, default 8000); a deployed table when TABLE_NAME and AWS_REGION are set (AWS credentials from the usual
places; DYNAMODB_ENDPOINT, when set, overrides the endpoint; clear-test-data also needs BUCKET_NAME, and
S3_ENDPOINT overrides the S3 endpoint). case reverify also needs VERIFICATION_RETRY_QUEUE_URL and
COMPANIES_HOUSE_API_KEY_SECRET, webhook redeliver WEBHOOK_DELIVERY_QUEUE_URL and WEBHOOK_TEST_DELIVERY_QUEUE_URL (the stack's outputs);
locally both use the running npm start's queues and registry stand-in.

--json: the last line printed is one JSON object. Exit codes: 0 done, 1 refused (e.g. unknown
company, revoked key) or storage unreachable, 2 bad arguments. Full reference: docs/local-development.md`;

interface Target {
  env: NodeJS.ProcessEnv;
  description: string;
  local: boolean;
  /** Whether a bucket is known (clear-test-data deletes test uploads from it). */
  bucketGiven: boolean;
  port?: number;
  /** Whether the port came from a running npm start (else from DYNAMODB_LOCAL_PORT or the default). */
  discovered?: boolean;
}

/** What case reverify and webhook redeliver need beside the table: from the environment, else (locally) from the running npm start. */
const QUEUE_AND_REGISTRY_VARIABLES = [
  'SQS_ENDPOINT',
  'VERIFICATION_RETRY_QUEUE_URL',
  'WEBHOOK_DELIVERY_QUEUE_URL',
  'WEBHOOK_TEST_DELIVERY_QUEUE_URL',
  'COMPANIES_HOUSE_API_KEY_SECRET',
  'COMPANIES_HOUSE_API_KEY',
  'COMPANIES_HOUSE_BASE_URL',
  'REGISTRY_RATE_LIMIT',
  'REGISTRY_RATE_WINDOW_SECONDS',
] as const;

function queueAndRegistryVariables(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return QUEUE_AND_REGISTRY_VARIABLES.reduce<NodeJS.ProcessEnv>(
    (picked, name) => (env[name] ? { ...picked, [name]: env[name] } : picked),
    {},
  );
}

function target(): Target {
  if (process.env.TABLE_NAME) {
    const region = process.env.AWS_REGION || process.env.AWS_DEFAULT_REGION;
    if (!region)
      throw new UsageError('TABLE_NAME is set but AWS_REGION is not: set both to use a deployed table, or neither for the local stack');
    const endpoint = process.env.DYNAMODB_ENDPOINT || undefined;
    if (endpoint && !URL.canParse(endpoint)) throw new UsageError(`DYNAMODB_ENDPOINT is not a URL: "${endpoint}"`);
    return {
      env: {
        TABLE_NAME: process.env.TABLE_NAME,
        BUCKET_NAME: process.env.BUCKET_NAME ?? 'unused-by-admin',
        AWS_REGION: region,
        DYNAMODB_ENDPOINT: endpoint,
        S3_ENDPOINT: process.env.S3_ENDPOINT || undefined,
        ...queueAndRegistryVariables(process.env),
      },
      bucketGiven: Boolean(process.env.BUCKET_NAME),
      description: `table ${process.env.TABLE_NAME}`,
      local: Boolean(endpoint),
      port: endpoint ? Number(new URL(endpoint).port || (new URL(endpoint).protocol === 'https:' ? 443 : 80)) : undefined,
    };
  }
  let port: number;
  const env = withRunningStackPorts(process.env);
  try {
    port = localPorts(env).dynamoPort;
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  return {
    env: {
      TABLE_NAME: LOCAL_DEFAULTS.tableName,
      BUCKET_NAME: LOCAL_DEFAULTS.bucketName,
      AWS_REGION: LOCAL_DEFAULTS.region,
      DYNAMODB_ENDPOINT: `http://127.0.0.1:${port}`,
      S3_ENDPOINT: `http://127.0.0.1:${localPorts(env).s3Port}`,
      // Variables that are set win, as the port variables do.
      ...runningStackEngines(process.env),
      ...queueAndRegistryVariables(process.env),
    },
    bucketGiven: true,
    description: `local table ${LOCAL_DEFAULTS.tableName}`,
    local: true,
    port,
    discovered: env !== process.env && !process.env.DYNAMODB_LOCAL_PORT,
  };
}

/**
 * The key id from --key, which may hold the full key (as pasted from a partner's report). A full
 * key is a secret: it is never repeated, not even in an error.
 */
function keyIdArgument(value: string | undefined): string {
  const given = need(value, 'key');
  if (KEY_ID_PATTERN.test(given)) return given;
  const parsed = parseApiKey(given);
  if (parsed) return parsed.keyId;
  if (given.startsWith(KEY_PREFIX))
    throw new UsageError(
      '--key looks like an API key but is not a valid one (mistyped or truncated); pass the key id from npm run admin -- key list --company ID',
    );
  throw new UsageError('--key must be a key id (16 letters and digits) or a full API key');
}

/**
 * case reverify names one case (`--case`, `--company` optional) or every case left `DRAFT` longer than
 * a duration (`--pending-longer-than`): the duration in milliseconds, or undefined for one case.
 */
function reverifySelection(values: { case?: string; company?: string; 'pending-longer-than'?: string }): number | undefined {
  const duration = values['pending-longer-than'];
  if (values.case !== undefined && duration !== undefined)
    throw new UsageError('case reverify takes --case or --pending-longer-than, not both');
  if (values.case !== undefined) return undefined;
  if (duration === undefined) throw new UsageError('case reverify needs --case or --pending-longer-than DURATION');
  const match = /^(\d{1,6})([smhd])$/.exec(duration);
  if (!match) throw new UsageError('--pending-longer-than must be a whole number and a unit s, m, h or d, such as 90m, 24h or 3d');
  const unitMs = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2] as 's' | 'm' | 'h' | 'd'];
  return Number(match[1]) * unitMs;
}

/**
 * The verification worker's own composition root (functions/verify-debtors.ts): its change store,
 * registry with the shared cache and rate limiter, and its retry queue, so the command does what
 * the worker does and never exceeds the registry's rate beside it.
 */
function reverifyDeps(cfg: AppConfig, where: Target) {
  const fix = where.local
    ? 'start npm start (its retry queue and registry stand-in are found through LOCAL_DATA_DIR), or set them'
    : 'see the stack outputs VerificationRetryQueueUrl and CompaniesHouseApiKeySecret';
  if (cfg.verificationRetryQueueUrl === undefined) throw new UsageError(`case reverify needs VERIFICATION_RETRY_QUEUE_URL: ${fix}`);
  try {
    return verificationAdapters(cfg, loadRegistryConfig(where.env));
  } catch (error) {
    throw new UsageError(`case reverify: ${(error as Error).message}: ${fix}`);
  }
}

/** The partner's redeliver route's own ports (functions/redeliver-webhook-event.ts): the operator needs no partner key. */
function redeliveryDeps(cfg: AppConfig, where: Target): RedeliverEventDeps {
  // Each mode's deliveries have their own lanes: a redelivery goes to its mode's fast lane.
  if (cfg.webhookDeliveryQueueUrl === undefined || cfg.webhookTestDeliveryQueueUrl === undefined)
    throw new UsageError(
      `webhook redeliver needs WEBHOOK_DELIVERY_QUEUE_URL and WEBHOOK_TEST_DELIVERY_QUEUE_URL: ${where.local ? 'start npm start (its queues are found through LOCAL_DATA_DIR), or set them' : 'see the stack outputs WebhookDeliveryQueueUrl and WebhookTestDeliveryQueueUrl'}`,
    );
  return webhookRedeliveryAdapters(cfg);
}

type ReverifyLine = ReverifyOutcome | { caseId: string; mode: Mode; companyId: string; result: 'failed'; detail: string };

function describeReverify(line: ReverifyLine): string {
  const state =
    line.result === 'failed' || line.result === 'not_found'
      ? ''
      : `; status ${line.status}, recoveryGate ${line.recoveryGate}, debtorVerification ${line.debtorVerification}`;
  const what = {
    settled: 'settled',
    verified: 'debtor verification recorded',
    retry_scheduled: `the registry still could not answer (${line.detail}); the worker tries again at ${'nextAttemptAt' in line ? line.nextAttemptAt : ''}`,
    unchanged: `nothing to do${'reason' in line && line.reason ? ` (${line.reason})` : ''}`,
    not_found: 'not found',
    failed: `failed: ${line.detail}`,
  }[line.result];
  return `${line.caseId} (${line.mode}, ${line.companyId ?? 'no company'}): ${what}${state}`;
}

/** Every case left DRAFT since before `createdBefore`, company by company and mode by mode, a few at once. */
async function reverifyLeftDraft(
  deps: ReturnType<typeof reverifyDeps>,
  lister: TableStores['caseLister'],
  scope: { companyIds: string[]; modes: readonly Mode[]; createdBefore: string },
  report: (line: ReverifyLine) => void,
): Promise<ReverifyLine[]> {
  const lines: ReverifyLine[] = [];
  const running = new Set<Promise<void>>();
  const one = async (mode: Mode, companyId: string, caseId: string) => {
    let line: ReverifyLine;
    try {
      line = await reverifyCase(deps, { mode, companyId, caseId });
    } catch (error) {
      line = { caseId, mode, companyId, result: 'failed', detail: (error as Error).message };
    }
    lines.push(line);
    report(line);
  };
  for (const companyId of scope.companyIds)
    for (const mode of scope.modes)
      for await (const stuck of casesLeftDraft(lister, { mode, companyId, createdBefore: scope.createdBefore })) {
        const started: Promise<void> = one(mode, companyId, stuck.caseId).finally(() => running.delete(started));
        running.add(started);
        // A few at once: the worker's rate limiter and retries hold the registry's rate whatever the number.
        if (running.size >= 8) await Promise.race(running);
      }
  await Promise.all(running);
  return lines;
}

function need(value: string | undefined, flag: string): string {
  if (value === undefined || value === '') throw new UsageError(`missing --${flag}`);
  return value;
}

function table(rows: Record<string, unknown>[], columns: string[]): string {
  if (rows.length === 0) return '(none)';
  const cells = rows.map((r) => columns.map((c) => (Array.isArray(r[c]) ? (r[c] as unknown[]).join(',') : String(r[c] ?? ''))));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((row) => (row[i] as string).length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => v.padEnd(widths[i] as number))
      .join('  ')
      .trimEnd();
  return [line(columns), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n');
}

/** The flags only case recovery takes. */
const RECOVERY_FLAGS = ['type', 'amount', 'paid-at', 'reference', 'reason', 'note', 'update-id'] as const;

/** The flag that carries each field of a recovery update (to name the flag, not the JSON field, in a usage error). */
const RECOVERY_FLAG_OF_FIELD: Record<string, string> = {
  updateId: '--update-id',
  caseId: '--case',
  type: '--type',
  amount: '--amount',
  paidAt: '--paid-at',
  reference: '--reference',
  reason: '--reason',
  note: '--note',
  'by.name': '--by',
  'by.email': '--email',
};

/**
 * The update case recovery applies, checked by the back office's own schema (recovery.ts
 * `recoveryUpdateSchema`) before any storage is touched. --amount is a decimal string (as the
 * API shows money); it becomes the JSON number the schema takes only once it has at most two
 * decimals, so no binary rounding can change the pence. Without --update-id a new one is made
 * (and printed, so the operator can repeat the command safely).
 */
function recoveryUpdateArgument(values: Record<string, string | boolean | undefined>): { update: RecoveryUpdate; generated: boolean } {
  const text = (flag: string) => (typeof values[flag] === 'string' ? (values[flag] as string) : undefined);
  const type = text('type');
  if (!(RECOVERY_UPDATE_TYPES as readonly (string | undefined)[]).includes(type))
    throw new UsageError(`--type must be one of ${RECOVERY_UPDATE_TYPES.join(', ')}`);
  const amount = text('amount');
  if (amount !== undefined && !/^\d{1,9}(\.\d{1,2})?$/.test(amount))
    throw new UsageError('--amount must be a sum in pounds with at most 2 decimals, such as 250.50');
  const givenId = text('update-id');
  const candidate = {
    updateId: givenId ?? `operator-${randomUUID()}`,
    caseId: text('case'),
    type,
    ...(amount !== undefined ? { amount: Number(amount) } : {}),
    ...(text('paid-at') !== undefined ? { paidAt: text('paid-at') } : {}),
    ...(text('reference') !== undefined ? { reference: text('reference') } : {}),
    ...(text('reason') !== undefined ? { reason: text('reason') } : {}),
    ...(text('note') !== undefined ? { note: text('note') } : {}),
    by: { name: text('by'), email: text('email') },
  };
  const parsed = recoveryUpdateSchema.safeParse(candidate);
  if (!parsed.success) {
    const [first] = fieldErrorsOf(parsed.error);
    const flag = first ? (RECOVERY_FLAG_OF_FIELD[first.field] ?? first.field) : 'arguments';
    throw new UsageError(`${flag}: ${first?.message ?? 'invalid'}`);
  }
  return { update: parsed.data, generated: givenId === undefined };
}

function describeRecoveryOutcome(
  outcome: RecoveryUpdateOutcome,
  request: { companyId: string; mode: Mode; update: RecoveryUpdate; generated: boolean },
): { human: string; json: Record<string, unknown>; refused: boolean } {
  const { companyId, mode, update, generated } = request;
  const id = `update ${update.updateId}${generated ? ' (generated; pass --update-id with it to repeat the command safely)' : ''}`;
  const json: Record<string, unknown> = { companyId, caseId: update.caseId, mode, updateId: update.updateId, result: outcome.result };
  switch (outcome.result) {
    case 'applied': {
      const view = outcome.case;
      const closure = view.closure ? `, closed ${view.closure.reason}` : '';
      Object.assign(json, { status: view.status, closure: view.closure, amounts: view.amounts });
      return {
        human:
          `Applied ${update.type} to ${mode} case ${update.caseId} of ${companyId} (${id}): status ${view.status}${closure}; ` +
          `paid ${view.amounts.paid}, outstanding ${view.amounts.outstanding}`,
        json,
        refused: false,
      };
    }
    case 'already_applied':
      return { human: `The ${id} was already applied; nothing changed`, json, refused: false };
    case 'not_found':
      return { human: `No ${mode} case ${update.caseId} exists for company ${companyId}; nothing applied`, json, refused: true };
    default:
      json.message = outcome.message;
      return { human: `Case ${update.caseId}: ${update.type} not applied (${outcome.result}): ${outcome.message}`, json, refused: true };
  }
}

async function run(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
        name: { type: 'string' },
        'auto-attestation': { type: 'boolean', default: false },
        company: { type: 'string' },
        enabled: { type: 'string' },
        scopes: { type: 'string' },
        key: { type: 'string' },
        mode: { type: 'string' },
        case: { type: 'string' },
        by: { type: 'string' },
        email: { type: 'string' },
        'pending-longer-than': { type: 'string' },
        type: { type: 'string' },
        amount: { type: 'string' },
        'paid-at': { type: 'string' },
        reference: { type: 'string' },
        reason: { type: 'string' },
        note: { type: 'string' },
        'update-id': { type: 'string' },
        endpoint: { type: 'string' },
        event: { type: 'string' },
      },
    });
  } catch (error) {
    throw new UsageError((error as Error).message.split('\n')[0] ?? 'bad arguments');
  }
  const { values, positionals } = parsed;
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  if (positionals.length === 0) throw new UsageError('no command given; see npm run admin -- --help');
  const [noun, verb, ...extra] = positionals;
  if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`);
  const command = `${noun} ${verb ?? ''}`.trim();
  const known = [
    'company create',
    'company list',
    'company set-auto-attestation',
    'company clear-test-data',
    'key create',
    'key list',
    'key revoke',
    'key rotate',
    'case confirm',
    'case recovery',
    'case reverify',
    'webhook redeliver',
  ];
  if (!known.includes(command)) throw new UsageError(`unknown command "${command}"; see npm run admin -- --help`);

  // Argument checks that need no storage come first, so a typo never waits on (or for) storage.
  const required: Record<
    string,
    ('name' | 'company' | 'enabled' | 'scopes' | 'key' | 'case' | 'by' | 'email' | 'type' | 'endpoint' | 'event')[]
  > = {
    'company create': ['name'],
    'company set-auto-attestation': ['company', 'enabled'],
    'company clear-test-data': ['company'],
    'key create': ['company', 'scopes'],
    'key list': ['company'],
    'key revoke': ['key'],
    'key rotate': ['key'],
    'case confirm': ['company', 'case', 'by'],
    'case recovery': ['company', 'case', 'type', 'by', 'email'],
    'webhook redeliver': ['company', 'endpoint', 'event'],
  };
  for (const flag of required[command] ?? []) need(values[flag], flag);
  const keyId = command === 'key revoke' || command === 'key rotate' ? keyIdArgument(values.key) : undefined;
  if (command === 'company set-auto-attestation' && !['true', 'false'].includes(values.enabled as string)) {
    throw new UsageError('--enabled must be true or false');
  }
  const withMode = ['key create', 'case confirm', 'case recovery', 'case reverify', 'webhook redeliver'];
  if (values.mode !== undefined && !withMode.includes(command)) throw new UsageError(`--mode is only for ${withMode.join(', ')}`);
  for (const flag of ['by', 'email'] as const)
    if (values[flag] !== undefined && command !== 'case confirm' && command !== 'case recovery')
      throw new UsageError(`--${flag} is only for case confirm and case recovery`);
  for (const flag of RECOVERY_FLAGS)
    if (values[flag] !== undefined && command !== 'case recovery') throw new UsageError(`--${flag} is only for case recovery`);
  if (values.case !== undefined && !['case confirm', 'case recovery', 'case reverify'].includes(command))
    throw new UsageError('--case is only for case confirm, case recovery and case reverify');
  if (values['pending-longer-than'] !== undefined && command !== 'case reverify')
    throw new UsageError('--pending-longer-than is only for case reverify');
  for (const flag of ['endpoint', 'event'] as const)
    if (values[flag] !== undefined && command !== 'webhook redeliver') throw new UsageError(`--${flag} is only for webhook redeliver`);
  if (values.case !== undefined && !CASE_ID_PATTERN.test(values.case))
    throw new UsageError('--case must be a case id (case_ and 22 letters or digits)');
  const pendingLongerThanMs = command === 'case reverify' ? reverifySelection(values) : undefined;
  if (command === 'webhook redeliver') {
    if (!ENDPOINT_ID_PATTERN.test(need(values.endpoint, 'endpoint')))
      throw new UsageError('--endpoint must be a webhook endpoint id (we_ and 22 letters or digits)');
    if (!EVENT_ID_PATTERN.test(need(values.event, 'event')))
      throw new UsageError('--event must be an event id (evt_ and 22 letters or digits)');
  }
  if (command === 'case confirm') {
    need(values.case, 'case');
    const by = confirmedBySchema.shape.name.safeParse(values.by);
    if (!by.success) throw new UsageError(`--by: ${by.error.issues[0]?.message ?? 'invalid'}`);
    if (values.email !== undefined && !confirmedBySchema.shape.email.safeParse(values.email).success)
      throw new UsageError('--email must be a valid e-mail address');
  }
  const recoveryUpdate = command === 'case recovery' ? recoveryUpdateArgument(values) : undefined;
  if (values.mode !== undefined && !isMode(values.mode)) throw new UsageError(`--mode must be one of ${MODES.join(', ')}`);
  if (command === 'key create') {
    try {
      parseScopeList(need(values.scopes, 'scopes'));
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
  }

  const where = target();
  if (command === 'company clear-test-data' && !where.bucketGiven) {
    throw new UsageError('company clear-test-data also deletes test uploads: set BUCKET_NAME to the invoice bucket');
  }
  let cfg;
  try {
    cfg = loadConfig(where.env);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (where.local && cfg.dynamoEndpoint) {
    const probe = new DynamoDBClient({
      endpoint: cfg.dynamoEndpoint,
      region: cfg.region,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      maxAttempts: 1,
    });
    try {
      await probe.send(new ListTablesCommand({ Limit: 1 }));
    } catch {
      const hint = where.discovered
        ? 'the npm start recorded for LOCAL_DATA_DIR is not answering'
        : 'start it with npm start (an npm start on other ports is found through its LOCAL_DATA_DIR, default .local)';
      console.error(`DynamoDB Local is not running on port ${where.port} (${cfg.dynamoEndpoint}): ${hint}`);
      return 1;
    } finally {
      probe.destroy();
    }
  }
  const client = createDocumentClient(cfg);
  const stores = tableStores(client, cfg.tableName);
  const accounts = new AccountsService(stores.companies, stores.keys);
  const out = (human: string, json: unknown) => console.log(values.json ? JSON.stringify(json) : human);

  try {
    switch (command) {
      case 'company create': {
        const company = await accounts.createCompany(need(values.name, 'name'), values['auto-attestation']);
        out(
          `Created company ${company.companyId} "${company.name}" (auto-attestation ${company.autoAttestation ? 'on' : 'off'}) in ${where.description}`,
          {
            companyId: company.companyId,
            name: company.name,
            autoAttestation: company.autoAttestation,
          },
        );
        break;
      }
      case 'company list': {
        const companies = await accounts.listCompanies();
        out(table(companies as unknown as Record<string, unknown>[], ['companyId', 'name', 'autoAttestation', 'createdAt']), { companies });
        break;
      }
      case 'company set-auto-attestation': {
        const companyId = need(values.company, 'company');
        const enabled = values.enabled === 'true';
        await accounts.setAutoAttestation(companyId, enabled);
        out(`Auto-attestation ${enabled ? 'enabled' : 'disabled'} for ${companyId}`, { companyId, autoAttestation: enabled });
        break;
      }
      case 'company clear-test-data': {
        const s3 = createS3Client(cfg);
        try {
          const cleared = await accounts.clearTestData(need(values.company, 'company'), {
            items: new DynamoTestModeItemStore(client, cfg.tableName),
            uploads: new S3TestModeUploadStore(s3, cfg.bucketName),
          });
          out(
            `Cleared test data of ${cleared.companyId}: ${cleared.items} items (cases, audit records, guards, events, confirmations, withdrawn invoiceRefs, claims) and ${cleared.uploads} uploads; live data untouched`,
            cleared,
          );
        } finally {
          s3.destroy();
        }
        break;
      }
      case 'key create':
      case 'key rotate': {
        const mode = isMode(values.mode) ? values.mode : 'live';
        const issued =
          command === 'key create'
            ? await accounts.createKey(need(values.company, 'company'), need(values.scopes, 'scopes'), undefined, mode)
            : await accounts.rotateKey(keyId!);
        if (!values.json) {
          console.error('The API key below is shown once and cannot be read back. Hand it to the partner over a secure channel.');
          if (command === 'key rotate')
            console.error(`The old key ${keyId} keeps working until you revoke it: npm run admin -- key revoke --key ${keyId}`);
        }
        out(
          `keyId   ${issued.keyId}\ncompany ${issued.companyId}\nscopes  ${issued.scopes.join(',')}\nmode    ${issued.mode}\napiKey  ${issued.apiKey}`,
          {
            keyId: issued.keyId,
            companyId: issued.companyId,
            apiKey: issued.apiKey,
            scopes: issued.scopes,
            mode: issued.mode,
          },
        );
        break;
      }
      case 'key list': {
        const keys = await accounts.listKeys(need(values.company, 'company'));
        out(
          table(keys as unknown as Record<string, unknown>[], [
            'keyId',
            'mode',
            'scopes',
            'revoked',
            'createdAt',
            'lastUsedAt',
            'revokedAt',
            'rotatedFrom',
          ]),
          { keys },
        );
        break;
      }
      case 'key revoke': {
        await accounts.revokeKey(keyId!);
        out(`Revoked key ${keyId}: it is refused from the next request on`, { keyId, revoked: true });
        break;
      }
      case 'case reverify': {
        const deps = reverifyDeps(cfg, where);
        if (pendingLongerThanMs === undefined) {
          const mode = isMode(values.mode) ? values.mode : 'live';
          const companyId = values.company;
          const caseId = need(values.case, 'case');
          const outcome = await reverifyCase(deps, { mode, caseId, ...(companyId === undefined ? {} : { companyId }) });
          if (outcome.result === 'not_found') {
            const line = `No ${mode} case ${caseId} exists${companyId === undefined ? '' : ` for company ${companyId}`}`;
            if (values.json) out(line, outcome);
            else console.error(line);
            return 1;
          }
          out(describeReverify(outcome), outcome);
          return 0;
        }
        const createdBefore = new Date(Date.now() - pendingLongerThanMs).toISOString();
        const companyIds = values.company !== undefined ? [values.company] : (await accounts.listCompanies()).map((c) => c.companyId);
        const modes = isMode(values.mode) ? [values.mode] : MODES;
        const lines = await reverifyLeftDraft(deps, stores.caseLister, { companyIds, modes, createdBefore }, (line) => {
          if (!values.json) console.log(describeReverify(line));
        });
        const counts = { settled: 0, verified: 0, retry_scheduled: 0, unchanged: 0, failed: 0 };
        for (const line of lines) if (line.result !== 'not_found') counts[line.result] += 1;
        out(
          `Cases left DRAFT since before ${createdBefore}: ${lines.length} (${Object.entries(counts)
            .map(([result, n]) => `${n} ${result.replace('_', ' ')}`)
            .join(', ')})`,
          { createdBefore, counts, cases: lines },
        );
        return counts.failed > 0 ? 1 : 0;
      }
      case 'webhook redeliver': {
        const mode = isMode(values.mode) ? values.mode : 'live';
        const companyId = need(values.company, 'company');
        const endpointId = need(values.endpoint, 'endpoint');
        const delivery = await redeliverEvent(redeliveryDeps(cfg, where), { companyId, mode }, endpointId, {
          eventId: need(values.event, 'event'),
        });
        out(
          `Made delivery ${delivery.id} of ${delivery.eventId} (${delivery.eventType}) to ${mode} endpoint ${endpointId} of ${companyId}: status ${delivery.status}; queued in its turn with the endpoint's other deliveries, it shows in the endpoint's delivery log`,
          { companyId, endpointId, mode, delivery },
        );
        break;
      }
      case 'case recovery': {
        const mode = isMode(values.mode) ? values.mode : 'live';
        const companyId = need(values.company, 'company');
        const { update, generated } = recoveryUpdate!;
        const outcome = await applyRecoveryUpdate(
          { store: new DynamoRecoveryStore(client, cfg.tableName) },
          { companyId, mode, update, requestId: `admin-${randomUUID()}`, now: new Date(), source: 'operator' },
        );
        const { human, json, refused } = describeRecoveryOutcome(outcome, { companyId, mode, update, generated });
        if (refused && !values.json) console.error(human);
        else out(human, json);
        return refused ? 1 : 0;
      }
      case 'case confirm': {
        const mode = isMode(values.mode) ? values.mode : 'live';
        const companyId = need(values.company, 'company');
        const caseId = need(values.case, 'case');
        const [outcome] = await confirmCases(
          { store: new DynamoCaseChangeStore(client, cfg.tableName), now: () => new Date() },
          {
            mode,
            companyId,
            caseIds: [caseId],
            confirmedBy: { name: need(values.by, 'by'), ...(values.email === undefined ? {} : { email: values.email }) },
            requestId: `admin-${randomUUID()}`,
            source: 'operator',
            // Who ran the command, beside the name they gave (--by).
            principal: `operator:${userInfo().username}`,
          },
        );
        const result = outcome?.result ?? 'not_found';
        const stored = outcome && 'stored' in outcome ? outcome.stored : undefined;
        const state = stored ? { status: stored.status, recoveryGate: stored.recoveryGate } : {};
        const human = {
          confirmed: `Confirmed ${mode} case ${caseId} of ${companyId}: status ${stored?.status}, recoveryGate ${stored?.recoveryGate}`,
          already_confirmed: `Case ${caseId} was already confirmed (status ${stored?.status}); nothing changed`,
          not_awaiting: `Case ${caseId} is not awaiting confirmation (recoveryGate ${stored?.recoveryGate}, status ${stored?.status}); nothing changed`,
          not_found: `No ${mode} case ${caseId} exists for company ${companyId}`,
          retry: `Case ${caseId}: ${outcome?.result === 'retry' ? outcome.message : ''}`,
        }[result];
        const refused = result === 'not_awaiting' || result === 'not_found' || result === 'retry';
        if (refused && !values.json) console.error(human);
        else out(human, { companyId, caseId, mode, result, ...state });
        return refused ? 1 : 0;
      }
    }
    return 0;
  } catch (error) {
    // Refusals of the use cases (an unknown endpoint or event, a disabled endpoint): their own words.
    if (error instanceof AccountsError || error instanceof CodedError) {
      console.error(error.message);
      return 1;
    }
    throw error;
  } finally {
    client.destroy();
  }
}

run(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof UsageError) {
      console.error(`admin: ${error.message}`);
      process.exit(2);
    }
    console.error(`admin: ${(error as Error).name}: ${(error as Error).message}`);
    process.exit(1);
  },
);
