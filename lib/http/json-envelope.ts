import type { MiddlewareObj } from '@middy/core';
import { InvalidRequestError } from '../errors.js';
import { PayloadTooLargeError, UnsupportedMediaTypeError } from './problem-details.js';
import { headerValues } from './headers.js';
import type { ApiContext, ApiEvent, ApiResult } from './types.js';

export const MAX_BODY_BYTES = 1024 * 1024;
const JSON_MEDIA_TYPE = /^application\/json[ \t]*(;.*)?$/i;

/**
 * Checks that run before the JSON parser: size (413, measured before any parsing), media type
 * (415) and presence of a body (400). It also normalises the content-type header name, which the
 * middy parser looks up only as `content-type` or `Content-Type`.
 */
export function jsonEnvelope(maxBytes = MAX_BODY_BYTES): MiddlewareObj<ApiEvent, ApiResult, Error, ApiContext> {
  return {
    before: ({ event }) => {
      const body = event.body ?? '';
      const bytes = event.isBase64Encoded ? Buffer.byteLength(body, 'base64') : Buffer.byteLength(body, 'utf8');
      if (bytes > maxBytes) throw new PayloadTooLargeError(maxBytes);

      const types = headerValues(event, 'content-type');
      if (types.length !== 1 || !JSON_MEDIA_TYPE.test((types[0] as string).trim())) throw new UnsupportedMediaTypeError();
      const headers: Record<string, string | undefined> = {};
      for (const [name, value] of Object.entries(event.headers ?? {})) {
        if (name.toLowerCase() !== 'content-type') headers[name] = value;
      }
      headers['content-type'] = (types[0] as string).trim();
      event.headers = headers;

      if (bytes === 0 || body.trim() === '') throw new InvalidRequestError('A JSON request body is required.');
    },
  };
}

/** After parsing: the body must be a JSON object (not an array, string, number or null). */
export function requireObjectBody(): MiddlewareObj<ApiEvent, ApiResult, Error, ApiContext> {
  return {
    before: ({ event }) => {
      const body: unknown = event.body;
      if (typeof body !== 'object' || body === null || Array.isArray(body)) {
        throw new InvalidRequestError('The request body must be a JSON object.');
      }
    },
  };
}
