import { readdirSync } from 'node:fs';
import { invokeSample, provisionEventValues, readEventTemplate, SAMPLE_EVENTS } from '../../infra/local/sample-events.js';
import { assertMatchesContract } from '../support/contract.js';

describe('the sample events in events/', () => {
  const files = readdirSync('events').filter((f) => f.endsWith('.json')).sort();
  let values: Record<string, string>;
  beforeAll(async () => {
    values = await provisionEventValues();
  });

  it('are each listed with the function and status they document', () => {
    expect(files.sort()).toEqual(Object.keys(SAMPLE_EVENTS).sort());
  });

  it.each(files)('%s answers with its documented status', async (file) => {
    const res = await invokeSample(file, values);
    const expected = SAMPLE_EVENTS[file]!;
    expect({ file, status: res.statusCode }).toEqual({ file, status: expected.status });
    const contentType = (res.headers?.['Content-Type'] ?? '') as string;
    expect(contentType).toBe(res.statusCode >= 400 ? 'application/problem+json' : 'application/json');
    const template = readEventTemplate(file) as { httpMethod: string; resource: string };
    assertMatchesContract(template.httpMethod, template.resource, res);
  });
});
