import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { commandLine, processAlive } from './local-processes.js';

/**
 * Port discovery: where the local stack listens. The fixed defaults, the port variables that
 * override them, and the running `npm start`'s own record of its ports. The one module of the
 * local world that operator tools (infra/ops) may import, so that `npm run admin` finds the
 * local table without loading the local servers.
 */

export const LOCAL_DEFAULTS = {
  apiPort: 3000,
  dynamoPort: 8000,
  s3Port: 4569,
  region: 'eu-west-2',
  tableName: 'partner-case-api-local',
  bucketName: 'partner-case-api-invoices-local',
} as const;

export interface LocalPorts {
  apiPort: number;
  dynamoPort: number;
  s3Port: number;
  /** The local SQS (fauxqs) and the Companies House stand-in: a free port each unless set. */
  sqsPort?: number;
  registryPort?: number;
}

function portFrom(value: string | undefined, name: string): number | undefined {
  if (value === undefined || value === '') return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw new Error(`${name} must be a port number, got "${value}"`);
  return n;
}

/**
 * Ports from `PORT`, `DYNAMODB_LOCAL_PORT`, `S3_LOCAL_PORT` (fixed defaults), `SQS_LOCAL_PORT`
 * and `REGISTRY_LOCAL_PORT` (a free port when unset: only npm start's own engines and the
 * recorded stack reach them).
 */
export function localPorts(env: NodeJS.ProcessEnv = process.env): LocalPorts {
  const sqsPort = portFrom(env.SQS_LOCAL_PORT, 'SQS_LOCAL_PORT');
  const registryPort = portFrom(env.REGISTRY_LOCAL_PORT, 'REGISTRY_LOCAL_PORT');
  return {
    apiPort: portFrom(env.PORT, 'PORT') ?? LOCAL_DEFAULTS.apiPort,
    dynamoPort: portFrom(env.DYNAMODB_LOCAL_PORT, 'DYNAMODB_LOCAL_PORT') ?? LOCAL_DEFAULTS.dynamoPort,
    s3Port: portFrom(env.S3_LOCAL_PORT, 'S3_LOCAL_PORT') ?? LOCAL_DEFAULTS.s3Port,
    ...(sqsPort === undefined ? {} : { sqsPort }),
    ...(registryPort === undefined ? {} : { registryPort }),
  };
}

/**
 * The running `npm start`, recorded in its data directory so that the admin command and
 * `npm run invoke` find its actual ports without being told (`PORT=4000 DYNAMODB_LOCAL_PORT=8001
 * npm start`, then `npm run admin -- company list` in another terminal).
 */
export const STACK_RECORD_FILE = 'local-stack.json';

export interface LocalStackRecord {
  pid: number;
  apiPort: number;
  dynamoPort: number;
  s3Port: number;
  /** Where its engines listen (the admin's case reverify and webhook redeliver use them); on free ports, so recorded. */
  engines?: LocalEngineAddresses;
}

export interface LocalEngineAddresses {
  sqsEndpoint: string;
  verificationRetryQueueUrl: string;
  webhookDeliveryQueueUrl: string;
  webhookTestDeliveryQueueUrl?: string;
  /** The Companies House stand-in, and its key (a fixed local value, never a real one). */
  registryUrl: string;
  registryApiKey: string;
}

export function recordLocalStack(dataDir: string, record: LocalStackRecord): void {
  writeFileSync(join(dataDir, STACK_RECORD_FILE), `${JSON.stringify(record)}\n`, { mode: 0o600 });
}

export function forgetLocalStack(dataDir: string): void {
  if (runningLocalStack(dataDir)?.pid === process.pid) rmSync(join(dataDir, STACK_RECORD_FILE), { force: true });
}

/** The npm start recorded in `dataDir`, if its process still runs. */
export function runningLocalStack(dataDir: string): LocalStackRecord | undefined {
  let parsed: Partial<LocalStackRecord>;
  try {
    parsed = JSON.parse(readFileSync(join(dataDir, STACK_RECORD_FILE), 'utf8')) as Partial<LocalStackRecord>;
  } catch {
    return undefined;
  }
  const numbers = [parsed.pid, parsed.apiPort, parsed.dynamoPort, parsed.s3Port];
  if (!numbers.every((n) => Number.isInteger(n) && (n as number) > 0)) return undefined;
  if (!processAlive(parsed.pid!) || !/node/.test(commandLine(parsed.pid!) ?? '')) return undefined;
  return parsed as LocalStackRecord;
}

/**
 * The environment of the running npm start's engines (recorded in `LOCAL_DATA_DIR`, default
 * `.local`): the variables the verifier and the redeliver route are given there, or nothing when
 * no npm start is running (or it predates the record).
 */
export function runningStackEngines(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const engines = runningLocalStack(env.LOCAL_DATA_DIR || '.local')?.engines;
  if (!engines) return {};
  return {
    SQS_ENDPOINT: engines.sqsEndpoint,
    VERIFICATION_RETRY_QUEUE_URL: engines.verificationRetryQueueUrl,
    WEBHOOK_DELIVERY_QUEUE_URL: engines.webhookDeliveryQueueUrl,
    WEBHOOK_TEST_DELIVERY_QUEUE_URL: engines.webhookTestDeliveryQueueUrl,
    COMPANIES_HOUSE_BASE_URL: engines.registryUrl,
    COMPANIES_HOUSE_API_KEY: engines.registryApiKey,
  };
}

/**
 * The environment with the port variables that are not set taken from the running npm start of
 * `LOCAL_DATA_DIR` (default `.local`); variables that are set always win.
 */
export function withRunningStackPorts(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const running = runningLocalStack(env.LOCAL_DATA_DIR || '.local');
  if (!running) return env;
  const pick = (value: string | undefined, recorded: number) => (value === undefined || value === '' ? String(recorded) : value);
  return {
    ...env,
    PORT: pick(env.PORT, running.apiPort),
    DYNAMODB_LOCAL_PORT: pick(env.DYNAMODB_LOCAL_PORT, running.dynamoPort),
    S3_LOCAL_PORT: pick(env.S3_LOCAL_PORT, running.s3Port),
  };
}
