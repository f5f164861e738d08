import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CompaniesHouseError } from '../../../lib/adapters/companies-house/companies-house-registry.js';
import { DynamoRegistryProfileCache } from '../../../lib/adapters/dynamodb/registry-profile-cache.js';
import { DynamoRegistryRateLimiter } from '../../../lib/adapters/dynamodb/registry-rate-limiter.js';
import { registryVerificationAdapters } from '../../../lib/adapters/production-verification-adapters.js';
import { loadConfig, loadRegistryConfig } from '../../../lib/runtime/config.js';
import {
  startCompaniesHouseStandIn,
  STAND_IN_FIXTURES,
  type CompaniesHouseStandIn,
} from '../../../infra/local/companies-house-stand-in.js';

/**
 * The verifier's registry wiring (lib/adapters/production-adapters.ts): configuration, the API key
 * read from Secrets Manager once per process and again after a 401, over the real SDK client and
 * the registry adapter, against a Secrets Manager stand-in (GetSecretValue over its JSON protocol)
 * and the local Companies House stand-in on loopback ports.
 */
const SECRET_NAME = 'partner-case-api/companies-house-api-key';

interface SecretsStandIn {
  url: string;
  value: string;
  /** GetSecretValue requests answered, in order, by SecretId. */
  reads: string[];
  close(): Promise<void>;
}

async function startSecretsStandIn(initial: string): Promise<SecretsStandIn> {
  const state = { value: initial, reads: [] as string[] };
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      const secretId = (JSON.parse(body) as { SecretId: string }).SecretId;
      state.reads.push(secretId);
      const ok = req.headers['x-amz-target'] === 'secretsmanager.GetSecretValue' && secretId === SECRET_NAME;
      const answer = ok
        ? {
            ARN: `arn:aws:secretsmanager:eu-west-2:111111111111:secret:${SECRET_NAME}-AbCdEf`,
            Name: SECRET_NAME,
            SecretString: `${state.value}\n`,
          }
        : { __type: 'ResourceNotFoundException', message: "Secrets Manager can't find the specified secret." };
      res.writeHead(ok ? 200 : 400, { 'Content-Type': 'application/x-amz-json-1.1' });
      res.end(JSON.stringify(answer));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get value() {
      return state.value;
    },
    set value(v: string) {
      state.value = v;
    },
    reads: state.reads,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const appConfig = () => loadConfig({ TABLE_NAME: 'partner-cases', BUCKET_NAME: 'invoices', DYNAMODB_ENDPOINT: 'http://127.0.0.1:1' });

describe('the verifier’s registry configuration', () => {
  it('defaults to 500 requests per 5 minutes and the real Companies House API', () => {
    expect(loadRegistryConfig({ COMPANIES_HOUSE_API_KEY_SECRET: SECRET_NAME })).toEqual({
      rateLimit: { limit: 500, windowMs: 300_000, slots: 10 },
      baseUrl: undefined,
      apiKey: undefined,
      apiKeySecret: SECRET_NAME,
    });
  });

  it('reads a configured limit, window and base URL', () => {
    expect(
      loadRegistryConfig({
        REGISTRY_RATE_LIMIT: '300',
        REGISTRY_RATE_WINDOW_SECONDS: '600',
        COMPANIES_HOUSE_BASE_URL: 'http://127.0.0.1:3990',
        COMPANIES_HOUSE_API_KEY: 'local-companies-house-key',
      }),
    ).toEqual({
      rateLimit: { limit: 300, windowMs: 600_000, slots: 10 },
      baseUrl: 'http://127.0.0.1:3990',
      apiKey: 'local-companies-house-key',
      apiKeySecret: undefined,
    });
  });

  it.each([
    [{ REGISTRY_RATE_LIMIT: '601' }, 'REGISTRY_RATE_LIMIT: must be at most 600 (the registry allows 600 per 5 minutes)'],
    [{ REGISTRY_RATE_LIMIT: '0' }, 'REGISTRY_RATE_LIMIT: must be at least 1'],
    [{ REGISTRY_RATE_LIMIT: '2.5' }, 'REGISTRY_RATE_LIMIT: must be a whole number of requests'],
    [{ REGISTRY_RATE_WINDOW_SECONDS: '60' }, 'REGISTRY_RATE_WINDOW_SECONDS: must be at least 300'],
    [{ COMPANIES_HOUSE_BASE_URL: 'companies house' }, 'COMPANIES_HOUSE_BASE_URL: must be a URL'],
  ])('refuses %j, naming the variable (a rate the registry would answer with 429s)', (env, message) => {
    expect(() => loadRegistryConfig({ COMPANIES_HOUSE_API_KEY_SECRET: SECRET_NAME, ...env })).toThrow(`Invalid configuration: ${message}`);
  });

  it('refuses to start without a key or the secret that holds it', () => {
    expect(() => loadRegistryConfig({})).toThrow('COMPANIES_HOUSE_API_KEY or COMPANIES_HOUSE_API_KEY_SECRET is required');
  });
});

describe('the verifier’s registry wiring', () => {
  let secrets: SecretsStandIn;
  let registry: CompaniesHouseStandIn;
  let port: number;

  beforeEach(async () => {
    secrets = await startSecretsStandIn('key-1');
    registry = await startCompaniesHouseStandIn({ apiKey: 'key-1' });
    port = Number(new URL(registry.url).port);
  });
  afterEach(async () => {
    await registry.close();
    await secrets.close();
  });

  /** The registry now accepts only `key` (the old key was deleted at Companies House). */
  async function rotateRegistryTo(key: string) {
    await registry.close();
    registry = await startCompaniesHouseStandIn({ apiKey: key, port });
  }

  function wire() {
    const cfg = loadRegistryConfig({
      COMPANIES_HOUSE_API_KEY_SECRET: SECRET_NAME,
      COMPANIES_HOUSE_BASE_URL: registry.url,
      REGISTRY_RATE_LIMIT: '450',
    });
    return registryVerificationAdapters(appConfig(), { ...cfg, secretsEndpoint: secrets.url });
  }

  it('builds the shared cache and limiter over the table, with the configured rate', () => {
    const adapters = wire();
    expect(adapters.cache).toBeInstanceOf(DynamoRegistryProfileCache);
    expect(adapters.limiter).toBeInstanceOf(DynamoRegistryRateLimiter);
    expect((adapters.limiter as DynamoRegistryRateLimiter).config).toEqual({ limit: 450, windowMs: 300_000, slots: 10 });
    // Nothing is read before the first look-up.
    expect(secrets.reads).toEqual([]);
  });

  it('reads the key from its secret once, however many look-ups follow', async () => {
    const { registry: companiesHouse } = wire();
    for (let i = 0; i < 3; i++) expect(await companiesHouse.lookup(STAND_IN_FIXTURES.ACTIVE)).toMatchObject({ kind: 'found' });
    await Promise.all(Array.from({ length: 5 }, () => companiesHouse.lookup(STAND_IN_FIXTURES.NOT_FOUND)));
    expect(secrets.reads).toEqual([SECRET_NAME]);
  });

  it('after a rotation, a 401 has the secret read again once for all concurrent look-ups, which then succeed', async () => {
    const { registry: companiesHouse } = wire();
    expect(await companiesHouse.lookup(STAND_IN_FIXTURES.ACTIVE)).toMatchObject({ kind: 'found' });
    secrets.value = 'key-2';
    await rotateRegistryTo('key-2');
    const answers = await Promise.all(Array.from({ length: 6 }, () => companiesHouse.lookup(STAND_IN_FIXTURES.ACTIVE)));
    expect(answers.every((a) => a.kind === 'found')).toBe(true);
    expect(secrets.reads).toEqual([SECRET_NAME, SECRET_NAME]);
  });

  it('a key refused again after the re-read is the operator’s problem: it throws, once, without looping', async () => {
    const { registry: companiesHouse } = wire();
    await rotateRegistryTo('a-key-nobody-stored');
    await expect(companiesHouse.lookup(STAND_IN_FIXTURES.ACTIVE)).rejects.toEqual(expect.any(CompaniesHouseError));
    await expect(companiesHouse.lookup(STAND_IN_FIXTURES.ACTIVE)).rejects.toMatchObject({ status: 401 });
    expect(registry.requests).toHaveLength(4);
    expect(secrets.reads).toHaveLength(3);
  });

  it('a failed read of the secret is not kept: the next look-up reads it again', async () => {
    const cfg = loadRegistryConfig({ COMPANIES_HOUSE_API_KEY_SECRET: 'no-such-secret', COMPANIES_HOUSE_BASE_URL: registry.url });
    const { registry: companiesHouse } = registryVerificationAdapters(appConfig(), { ...cfg, secretsEndpoint: secrets.url });
    await expect(companiesHouse.lookup(STAND_IN_FIXTURES.ACTIVE)).rejects.toMatchObject({ name: 'ResourceNotFoundException' });
    await expect(companiesHouse.lookup(STAND_IN_FIXTURES.ACTIVE)).rejects.toMatchObject({ name: 'ResourceNotFoundException' });
    expect(secrets.reads).toEqual(['no-such-secret', 'no-such-secret']);
    expect(registry.requests).toEqual([]);
  });
});
