import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';

/**
 * The partner contract on the local server (`npm start`):
 *   GET /api/v1/openapi.json       the committed docs/openapi.json
 *   GET /docs                      a reference page rendered by Redoc
 *   GET /docs/redoc.standalone.js  Redoc's standalone bundle, from node_modules (no CDN)
 * Files are read on each request, so a regenerated document shows without a restart.
 */
export const OPENAPI_ROUTE = '/api/v1/openapi.json';
export const DOCS_ROUTE = '/docs';
const REDOC_SCRIPT_ROUTE = '/docs/redoc.standalone.js';

const root = () => process.cwd();
const openApiFile = () => resolve(root(), 'docs/openapi.json');
const redocScriptFile = () => createRequire(resolve(root(), 'package.json')).resolve('redoc/bundles/redoc.standalone.js');

/** Everything from this server; Redoc needs inline styles, its init script and a blob: worker. */
const PAGE_CSP =
  "default-src 'self'; script-src 'self' 'unsafe-inline' blob:; worker-src 'self' blob:; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'";

export interface StaticResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: string | Buffer;
}

export function docsPage(): string {
  return `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>Partner Case API reference</title>
    <style>body { margin: 0; padding: 0; }</style>
  </head>
  <body>
    <div id="redoc-container"></div>
    <script src="${REDOC_SCRIPT_ROUTE}"></script>
    <script>
      Redoc.init(${JSON.stringify(OPENAPI_ROUTE)}, { expandResponses: '200,201', jsonSampleExpandLevel: 3, hideDownloadButton: false }, document.getElementById('redoc-container'));
    </script>
  </body>
</html>
`;
}

/** The response for a docs route, or undefined when the method and path are not one of them. */
export function docsResponse(method: string, pathname: string): StaticResponse | undefined {
  if (method !== 'GET' && method !== 'HEAD') return undefined;
  const path = pathname.length > 1 ? pathname.replace(/\/+$/, '') : pathname;
  switch (path) {
    case OPENAPI_ROUTE:
      return {
        statusCode: 200,
        headers: { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-cache' },
        body: readFileSync(openApiFile()),
      };
    case DOCS_ROUTE:
      return {
        statusCode: 200,
        headers: { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-cache', 'Content-Security-Policy': PAGE_CSP },
        body: docsPage(),
      };
    case REDOC_SCRIPT_ROUTE:
      return {
        statusCode: 200,
        headers: { 'Content-Type': 'text/javascript; charset=utf-8', 'Cache-Control': 'max-age=3600' },
        body: readFileSync(redocScriptFile()),
      };
    default:
      return undefined;
  }
}
