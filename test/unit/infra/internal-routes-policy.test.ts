import { anonymousPrincipal, runSimulation, type Simulation } from '@cloud-copilot/iam-simulate';
import { ROUTE_TABLE, authorizationOf } from '../../../infra/contract/route-table.js';
import { readStackConfig } from '../../../infra/contract/stack-config.js';
import { cdkJsonContext, onlyResource, synth } from './synth.js';

/**
 * Who may call which route through the API's resource policy, evaluated with IAM's own logic
 * (@cloud-copilot/iam-simulate) on the synthesised policy: the partner routes stay open to
 * anyone (their handlers check the API key), the internal route only to the configured principals.
 * The resource ARN is the one API Gateway authorises (`arn:aws:execute-api:<region>:<account>:
 * <api-id>/<stage>/<METHOD>/<path>`), and `execute-api:/` in the policy is API Gateway's shorthand
 * for `arn:aws:execute-api:<region>:<account>:<api-id>/`.
 */
const DEV = (cdkJsonContext().stages as Record<string, { account: string; region: string }>).dev!;
const API_ID = 'a1b2c3d4e5';
const OTHER_ACCOUNT = '999999999999';
const DASHBOARD = `arn:aws:iam::${OTHER_ACCOUNT}:role/dashboard`;
const methodArn = (method: string, path: string) => `arn:aws:execute-api:${DEV.region}:${DEV.account}:${API_ID}/dev/${method}${path}`;

function resourcePolicy(context: Record<string, unknown> = {}): unknown {
  const policy = onlyResource(synth(context).template, 'AWS::ApiGateway::RestApi').Properties.Policy;
  return JSON.parse(JSON.stringify(policy).replaceAll('"execute-api:/', `"arn:aws:execute-api:${DEV.region}:${DEV.account}:${API_ID}/`));
}

interface Caller {
  /** A role ARN, or anonymous (an unsigned partner request). */
  principal: string | typeof anonymousPrincipal;
  /** Whether the caller's own identity policy grants execute-api:Invoke on the method. */
  identityAllows?: boolean;
}

async function decision(policy: unknown, caller: Caller, method: string, path: string): Promise<string> {
  const resource = methodArn(method, path);
  const { principal } = caller;
  const simulation: Simulation = {
    request: {
      principal,
      action: 'execute-api:Invoke',
      resource: { resource, accountId: DEV.account },
      // The simulator leaves the principal's own keys to the caller: what AWS sets for a signed request.
      contextVariables:
        typeof principal === 'string' ? { 'aws:PrincipalArn': principal, 'aws:PrincipalAccount': principal.split(':')[4]! } : {},
    },
    identityPolicies: caller.identityAllows
      ? [
          {
            name: 'caller',
            policy: { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: 'execute-api:Invoke', Resource: resource }] },
          },
        ]
      : [],
    serviceControlPolicies: [],
    resourceControlPolicies: [],
    resourcePolicy: policy,
  };
  const result = await runSimulation(simulation, {});
  if (result.resultType !== 'single') throw new Error(`simulation failed: ${JSON.stringify(result)}`);
  return result.overallResult;
}

const INTERNAL = ROUTE_TABLE.filter((route) => authorizationOf(route) === 'aws-iam');
const PARTNER = ROUTE_TABLE.filter((route) => authorizationOf(route) === 'api-key');
const concrete = (resource: string) => resource.replaceAll(/\{[^}]+\}/g, 'x_1');

// Synthesising takes seconds: once per policy, and each test given the time its simulations take on a shared machine.
jest.setTimeout(60_000);

describe('the API resource policy: partner routes open, internal routes for the configured principals only', () => {
  it("names the internal routes: the dashboard's confirmations and the recovery back office's updates", () => {
    expect(INTERNAL.map((r) => `${r.method} ${r.resource}`)).toEqual([
      'POST /internal/v1/confirmations',
      'POST /internal/v1/recovery-updates',
    ]);
  });

  it('every partner route, and a wrong method on the internal path (its 405), stays callable by anyone', async () => {
    const policy = resourcePolicy();
    for (const route of PARTNER) {
      const path = concrete(route.resource);
      expect({
        route: `${route.method} ${path}`,
        decision: await decision(policy, { principal: anonymousPrincipal }, route.method, path),
      }).toEqual({
        route: `${route.method} ${path}`,
        decision: 'Allowed',
      });
    }
    expect(await decision(policy, { principal: anonymousPrincipal }, 'GET', '/internal/v1/confirmations')).toBe('Allowed');
  });

  it('by default the internal route is the stack account\u2019s: its roles with an identity policy may call it, others and other accounts may not', async () => {
    const policy = resourcePolicy();
    const own = `arn:aws:iam::${DEV.account}:role/dashboard`;
    expect(await decision(policy, { principal: own, identityAllows: true }, 'POST', '/internal/v1/confirmations')).toBe('Allowed');
    // The account root is named: each role still needs its own identity policy.
    expect(await decision(policy, { principal: own }, 'POST', '/internal/v1/confirmations')).toBe('ImplicitlyDenied');
    expect(await decision(policy, { principal: DASHBOARD, identityAllows: true }, 'POST', '/internal/v1/confirmations')).toBe(
      'ExplicitlyDenied',
    );
    expect(await decision(policy, { principal: anonymousPrincipal }, 'POST', '/internal/v1/confirmations')).toBe('ExplicitlyDenied');
  });

  it('a dashboard role in another account configured for the stage may call the internal route with its own identity policy; nobody else may', async () => {
    const policy = resourcePolicy({ stages: { dev: { ...DEV, internalPrincipals: [DASHBOARD] } } });
    expect(await decision(policy, { principal: DASHBOARD, identityAllows: true }, 'POST', '/internal/v1/confirmations')).toBe('Allowed');
    // Cross-account: the resource policy alone is not enough.
    expect(await decision(policy, { principal: DASHBOARD }, 'POST', '/internal/v1/confirmations')).toBe('ImplicitlyDenied');
    for (const other of [`arn:aws:iam::${OTHER_ACCOUNT}:role/intruder`, `arn:aws:iam::${DEV.account}:role/dashboard`]) {
      expect({
        other,
        decision: await decision(policy, { principal: other, identityAllows: true }, 'POST', '/internal/v1/confirmations'),
      }).toEqual({
        other,
        decision: 'ExplicitlyDenied',
      });
    }
    expect(await decision(policy, { principal: anonymousPrincipal }, 'GET', '/api/v1/cases')).toBe('Allowed');
  });

  it('internalPrincipals defaults to the stage account root and refuses anything but account roots, roles and users', () => {
    const context = (extra: Record<string, unknown>) => {
      const values: Record<string, unknown> = { ...cdkJsonContext(), stage: 'dev', ...extra };
      return { tryGetContext: (key: string) => values[key] };
    };
    expect(readStackConfig(context({})).internalPrincipals).toEqual([`arn:aws:iam::${DEV.account}:root`]);
    expect(readStackConfig(context({ internalPrincipals: `${DASHBOARD}, arn:aws:iam::${DEV.account}:root` })).internalPrincipals).toEqual([
      DASHBOARD,
      `arn:aws:iam::${DEV.account}:root`,
    ]);
    for (const bad of ['*', OTHER_ACCOUNT, 'arn:aws:sts::999999999999:assumed-role/dashboard/s1', [], ['arn:aws:iam::1:root']]) {
      expect(() => readStackConfig(context({ internalPrincipals: bad }))).toThrow(/internalPrincipals/);
    }
  });
});
