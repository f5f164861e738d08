import { DEFAULT_STACK_CONFIG, readStackConfig } from '../../../infra/stack-config.js';
import { cdkJsonContext } from './synth.js';

const fromContext = (context: Record<string, unknown>) => readStackConfig({ tryGetContext: (key) => context[key] });

describe('stack configuration from CDK context', () => {
  it('uses the documented defaults when nothing is set', () => {
    expect(fromContext({})).toEqual(DEFAULT_STACK_CONFIG);
  });

  it('cdk.json repeats exactly the built-in defaults', () => {
    const context = cdkJsonContext();
    const ours = Object.fromEntries(Object.keys(DEFAULT_STACK_CONFIG).filter((k) => k in context).map((k) => [k, context[k]]));
    const defaults = Object.fromEntries(
      Object.entries(DEFAULT_STACK_CONFIG).filter(([, value]) => value !== undefined),
    );
    expect(ours).toEqual(defaults);
    expect(fromContext(context)).toEqual(DEFAULT_STACK_CONFIG);
  });

  it('reads command-line strings as numbers and booleans', () => {
    const config = fromContext({ waf: 'false', throttleRate: '12.5', throttleBurst: '25', invoiceExpirationDays: '3650', alarmEmail: 'ops@example.com' });
    expect(config).toMatchObject({ waf: false, throttleRate: 12.5, throttleBurst: 25, invoiceExpirationDays: 3650, alarmEmail: 'ops@example.com' });
  });

  it.each([
    [{ waf: 'no' }, 'waf'],
    [{ throttleBurst: '1.5' }, 'throttleBurst'],
    [{ throttleRate: '100', throttleBurst: '10' }, 'throttleBurst'],
    [{ uploadUrlTtlSeconds: 7200 }, 'uploadUrlTtlSeconds'],
    [{ idempotencyTtlSeconds: '10' }, 'idempotencyTtlSeconds'],
    [{ logRetentionDays: 100 }, 'logRetentionDays'],
    [{ stageName: 'has space' }, 'stageName'],
    [{ alarmEmail: 'not-an-address' }, 'alarmEmail'],
    [{ wafRateLimitPerKey: 5 }, 'wafRateLimitPerKey'],
  ])('refuses %p, naming the key', (context, key) => {
    expect(() => fromContext(context)).toThrow(new RegExp(`"${key}"`));
  });
});
