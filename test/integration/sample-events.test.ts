import { readdirSync } from 'node:fs';
import { invokeSample, provisionEventValues, readEventTemplate, reportInvocation, SAMPLE_EVENTS } from '../../infra/local/sample-events.js';
import { API_FUNCTIONS } from '../../infra/contract/route-table.js';
import { assertMatchesContract } from '../support/contract.js';

describe('the sample events in events/', () => {
  const files = readdirSync('events')
    .filter((f) => f.endsWith('.json'))
    .sort();
  let values: Record<string, string>;
  beforeAll(async () => {
    values = await provisionEventValues();
  });

  it('are each listed with the function and status they document', () => {
    expect(files.sort()).toEqual(Object.keys(SAMPLE_EVENTS).sort());
  });

  it.each(files)('%s answers with its documented status', async (file) => {
    const { outcome, result: res } = await invokeSample(file, values);
    expect(outcome).toBe('answered');
    const expected = SAMPLE_EVENTS[file]!;
    expect({ file, status: res.statusCode }).toEqual({ file, status: expected.status });
    const contentType = (res.headers?.['Content-Type'] ?? '') as string;
    expect(contentType).toBe(res.statusCode >= 400 ? 'application/problem+json' : 'application/json');
    const template = readEventTemplate(file) as { httpMethod: string; resource: string };
    assertMatchesContract(template.httpMethod, template.resource, res);
  });

  it('run with their function’s timeout from the stack: the context counts down from it', async () => {
    let remainingMs = -1;
    const { outcome } = await invokeSample('create-cases.json', values, {
      handler: async (_event, context) => {
        remainingMs = context.getRemainingTimeInMillis();
        return { statusCode: 200, body: '{}' };
      },
    });
    expect(outcome).toBe('answered');
    const timeoutMs = API_FUNCTIONS.createCases.timeoutSeconds * 1000;
    expect(remainingMs).toBeGreaterThan(timeoutMs - 5_000);
    expect(remainingMs).toBeLessThanOrEqual(timeoutMs);
  });

  it('report a function that overruns its timeout as Lambda does, with API Gateway’s 502, and exit 1', async () => {
    let release: () => void = () => undefined;
    const never = new Promise<void>((resolve) => (release = resolve));
    try {
      const invocation = await invokeSample('get-case.json', values, {
        timeoutMs: 30,
        handler: async () => {
          await never;
          return { statusCode: 200, body: '{}' };
        },
      });
      expect(invocation.outcome).toBe('function-timeout');
      const report = reportInvocation('get-case.json', invocation);
      expect(report.exitCode).toBe(1);
      expect(report.stderr.join('\n')).toContain('Task timed out after 0.03 seconds');
      const printed = JSON.parse(report.stdout) as { statusCode: number; headers: Record<string, string>; body: Record<string, unknown> };
      expect(printed).toMatchObject({
        statusCode: 502,
        headers: { 'Content-Type': 'application/problem+json' },
        body: { code: 'INTERNAL' },
      });
    } finally {
      release();
    }
  });

  it('report a handler that answers as exit 0 with its result', async () => {
    const report = reportInvocation('get-case.json', await invokeSample('get-case.json', values));
    expect(report.exitCode).toBe(0);
    expect(JSON.parse(report.stdout)).toMatchObject({ statusCode: 200 });
  });
});
