import { readdirSync, readFileSync } from 'node:fs';
import { ROUTE_MANIFEST } from '../../infra/contract/routes/index.js';
import { renderSampleEvent, SAMPLE_EVENT_TABLE } from '../../infra/local/sample-event-files.js';

/**
 * events/ is generated (`npm run events`) from the route manifest and the table of sample rows:
 * a file edited by hand, a row without its file or a route whose method or path changed shows here.
 */
describe('the sample events in events/', () => {
  const files = readdirSync('events')
    .filter((f) => f.endsWith('.json'))
    .sort();

  it('are exactly the rows of the sample table', () => {
    expect(files).toEqual(Object.keys(SAMPLE_EVENT_TABLE).sort());
  });

  it.each(files)('%s is what its row and its route render (run npm run events after changing either)', (file) => {
    const row = SAMPLE_EVENT_TABLE[file];
    expect(row).toBeDefined();
    expect(JSON.parse(readFileSync(`events/${file}`, 'utf8'))).toEqual(renderSampleEvent(row!));
  });

  it('each carries its route’s method, resource and a path that matches the resource', () => {
    for (const row of Object.values(SAMPLE_EVENT_TABLE)) {
      const event = renderSampleEvent(row) as { httpMethod: string; resource: string; path: string };
      const route = ROUTE_MANIFEST[row.function];
      expect({ method: event.httpMethod, resource: event.resource }).toEqual({ method: route.method, resource: route.resource });
      const pattern = new RegExp(`^${route.resource.replace(/\{\w+\}/g, '[^/]+')}$`);
      expect(event.path).toMatch(pattern);
    }
  });

  it('refuse a row that leaves a path parameter unfilled', () => {
    expect(() => renderSampleEvent({ function: 'getCase', status: 200, description: 'no id' })).toThrow('/api/v1/cases/{id} needs an id');
  });
});
