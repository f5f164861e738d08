import { existsSync } from 'node:fs';
import { API_FUNCTION_IDS, ROUTE_MANIFEST } from '../../infra/contract/routes/index.js';
import { API_FUNCTIONS } from '../../infra/contract/route-table.js';

/**
 * The manifest names each handler twice, once as the stack bundles it (`functions/<name>.ts`, from
 * the name) and once as the local server imports it (`load`): the two must be the same file, or
 * `npm start` would run other code than the deployed function.
 */
describe('the route manifest', () => {
  it.each(API_FUNCTION_IDS)('%s: the stack bundles the file the local server loads, and it exists', (id) => {
    const { name, load } = ROUTE_MANIFEST[id];
    expect(API_FUNCTIONS[id].entry).toBe(`functions/${name}.ts`);
    expect(existsSync(API_FUNCTIONS[id].entry)).toBe(true);
    expect(load.toString()).toContain(`functions/${name}.js`);
  });

  it('gives every function its own name, construct id, operation name and route', () => {
    const entries = Object.values(ROUTE_MANIFEST);
    for (const key of ['name', 'constructId', 'operationName'] as const)
      expect(new Set(entries.map((e) => e[key])).size).toBe(entries.length);
    expect(new Set(entries.map((e) => `${e.method} ${e.resource}`)).size).toBe(entries.length);
  });

  it('names a scope for every partner route and none for an internal one', () => {
    for (const entry of Object.values(ROUTE_MANIFEST)) expect(entry.scope === undefined).toBe(entry.authorization === 'aws-iam');
  });
});
