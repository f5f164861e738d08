import { writeFileSync } from 'node:fs';
import { OPENAPI_FILE, renderOpenApiDocument } from './document.js';

/** `npm run openapi`: writes docs/openapi.json from the zod schemas (see document.ts). */
writeFileSync(OPENAPI_FILE, renderOpenApiDocument());
console.log(`wrote ${OPENAPI_FILE}`);
