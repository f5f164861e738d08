import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { ApiContext } from '../../lib/http/types.js';

/**
 * Contract checks: every response a test receives from a handler is validated against the
 * committed docs/openapi.json (status, headers, media type, body). A response that does not
 * match throws, so the test that produced it fails, naming the operation and the mismatch.
 *
 * Stricter than the published document in one way: objects are closed (additionalProperties:
 * false) before validation, so the code cannot send a member the document does not list. Only
 * statuses the operation lists explicitly are accepted (`default` is for the gateway's answers).
 */

type Json = Record<string, unknown>;

interface HeaderDoc {
  required?: boolean;
  schema?: Json;
}

interface ResponseDoc {
  headers?: Record<string, HeaderDoc>;
  content?: Record<string, { schema?: Json }>;
}

const DOC_ID = 'https://contract.test/openapi.json';

/** ajv-formats is CommonJS; its default export arrives either way depending on the loader. */
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as unknown as (
  ajv: Ajv2020,
) => Ajv2020;

/** Sets additionalProperties: false on every object schema that lists properties and says nothing. */
function closeObjects(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(closeObjects);
  if (typeof node !== 'object' || node === null) return node;
  const out: Json = {};
  for (const [key, value] of Object.entries(node)) {
    // Example values are data, not schemas.
    out[key] = key === 'example' || key === 'examples' ? value : closeObjects(value);
  }
  if (
    typeof out.properties === 'object' &&
    out.properties !== null &&
    !('additionalProperties' in out) &&
    (out.type === 'object' || out.type === undefined)
  ) {
    out.additionalProperties = false;
  }
  return out;
}

const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

class Contract {
  readonly document: Json;
  private readonly ajv: Ajv2020;
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(file: string) {
    this.document = JSON.parse(readFileSync(file, 'utf8')) as Json;
    this.ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
    addFormats(this.ajv);
    this.ajv.addSchema({ ...(closeObjects(this.document) as Json), $id: DOC_ID });
  }

  private validator(ref: string): ValidateFunction {
    let fn = this.validators.get(ref);
    if (!fn) {
      fn = this.ajv.getSchema(`${DOC_ID}#/${ref}`);
      if (!fn) throw new Error(`contract: no schema at #/${ref}`);
      this.validators.set(ref, fn);
    }
    return fn;
  }

  /** Problems with this response for this operation; empty when it matches the document. */
  problems(method: string, resource: string, result: APIGatewayProxyResult): string[] {
    const paths = this.document.paths as Record<string, Record<string, { responses?: Record<string, ResponseDoc> }>>;
    const operation = paths[resource]?.[method.toLowerCase()];
    if (!operation) return [`the document has no operation ${method} ${resource}`];
    const status = String(result.statusCode);
    const response = operation.responses?.[status];
    if (!response) return [`status ${status} is not listed for ${method} ${resource}`];

    const problems: string[] = [];
    const headers = new Map<string, string>();
    for (const [name, value] of Object.entries(result.headers ?? {})) headers.set(name.toLowerCase(), String(value));
    for (const name of Object.keys(result.multiValueHeaders ?? {})) problems.push(`multi-value header ${name} is not expected`);

    const documented = new Map(Object.entries(response.headers ?? {}).map(([name, doc]) => [name.toLowerCase(), { name, doc }]));
    for (const [lower, { name, doc }] of documented) {
      const value = headers.get(lower);
      if (value === undefined) {
        if (doc.required) problems.push(`required header ${name} is missing`);
        continue;
      }
      if (doc.schema) {
        const fn = this.validator(pointer('paths', resource, method.toLowerCase(), 'responses', status, 'headers', name, 'schema'));
        if (!fn(value)) problems.push(`header ${name}: ${this.ajv.errorsText(fn.errors)} (value ${JSON.stringify(value)})`);
      }
    }
    for (const lower of headers.keys()) {
      if (lower !== 'content-type' && !documented.has(lower)) problems.push(`header ${lower} is sent but not documented for ${status}`);
    }

    const contentType = headers.get('content-type')?.split(';')[0]?.trim();
    const content = response.content ?? {};
    if (Object.keys(content).length === 0) {
      if (result.body) problems.push(`a body is sent but ${status} documents none`);
      return problems;
    }
    if (!contentType || !(contentType in content)) {
      problems.push(`Content-Type ${String(contentType)} is not one of ${Object.keys(content).join(', ')}`);
      return problems;
    }
    let body: unknown;
    try {
      body = JSON.parse(result.body);
    } catch {
      problems.push('the body is not JSON');
      return problems;
    }
    const fn = this.validator(pointer('paths', resource, method.toLowerCase(), 'responses', status, 'content', contentType, 'schema'));
    if (!fn(body)) {
      for (const error of fn.errors ?? []) {
        const extra = 'additionalProperty' in error.params ? ` (${String(error.params.additionalProperty)})` : '';
        problems.push(`body${error.instancePath} ${error.message ?? 'is invalid'}${extra}`);
      }
    }
    return problems;
  }
}

let shared: Contract | undefined;

/** The committed document, loaded once per test file. */
export function contract(): Contract {
  shared ??= new Contract(resolve(process.cwd(), 'docs/openapi.json'));
  return shared;
}

/** Throws when the response does not match the operation `method resource` in docs/openapi.json. */
export function assertMatchesContract(method: string, resource: string, result: APIGatewayProxyResult): void {
  const problems = contract().problems(method, resource, result);
  if (problems.length > 0) {
    throw new Error(
      `Response does not match docs/openapi.json for ${method} ${resource} → ${result.statusCode}:\n  - ${problems.join('\n  - ')}\nbody: ${String(result.body).slice(0, 2000)}`,
    );
  }
}

export type Invocable = (event: APIGatewayProxyEvent, context: ApiContext) => Promise<APIGatewayProxyResult>;

/** Invokes a handler and checks its response against the operation the event addresses. */
export async function checkedInvoke(handler: Invocable, event: APIGatewayProxyEvent, context: ApiContext): Promise<APIGatewayProxyResult> {
  const result = await handler(event, context);
  assertMatchesContract(event.httpMethod, event.resource, result);
  return result;
}
