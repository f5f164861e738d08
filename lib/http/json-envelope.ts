import type { MiddlewareObj } from '@middy/core';
import { InvalidRequestError } from '../errors.js';
import { PayloadTooLargeError, UnsupportedMediaTypeError } from './problem-details.js';
import { headerValues } from './headers.js';
import type { ApiContext, ApiEvent, ApiResult } from './types.js';

export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * Whether a Content-Type names JSON in UTF-8. Media types and parameter names compare
 * case-insensitively and whitespace around `;` and `=` is allowed (RFC 9110 8.3.1); a charset,
 * when given, must be UTF-8 (RFC 8259 8.1): anything else would be decoded wrongly.
 */
export function jsonMediaType(value: string): 'json' | 'wrong-charset' | 'not-json' {
  const [type = '', ...parameters] = value.split(';');
  if (type.trim().toLowerCase() !== 'application/json') return 'not-json';
  for (const parameter of parameters) {
    const eq = parameter.indexOf('=');
    if (eq < 0) {
      if (parameter.trim() === '') continue;
      return 'not-json';
    }
    if (parameter.slice(0, eq).trim().toLowerCase() !== 'charset') continue;
    const charset = parameter
      .slice(eq + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1')
      .toLowerCase();
    if (charset !== 'utf-8' && charset !== 'utf8') return 'wrong-charset';
  }
  return 'json';
}

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Checks that run before the JSON parser: size (413, measured before any parsing), media type
 * (415), UTF-8 validity and presence of a body (400). A body that arrives base64-encoded (API
 * Gateway and the local adapter do so for bytes that are not UTF-8 text) is decoded here, strictly:
 * the middy parser would decode it lossily, turning bad bytes into U+FFFD in stored data. The
 * content-type header is rewritten to the plain `application/json` the middy parser matches
 * (it compares case-sensitively and looks the header up by two spellings only).
 */
export function jsonEnvelope(maxBytes = MAX_BODY_BYTES): MiddlewareObj<ApiEvent, ApiResult, Error, ApiContext> {
  return {
    before: ({ event }) => {
      const body = event.body ?? '';
      const bytes = event.isBase64Encoded ? Buffer.byteLength(body, 'base64') : Buffer.byteLength(body, 'utf8');
      if (bytes > maxBytes) throw new PayloadTooLargeError(maxBytes);

      const types = headerValues(event, 'content-type');
      const mediaType = types.length === 1 ? jsonMediaType(types[0] as string) : 'not-json';
      if (mediaType === 'not-json') throw new UnsupportedMediaTypeError();
      if (mediaType === 'wrong-charset')
        throw new UnsupportedMediaTypeError(
          'The request body must be JSON in UTF-8: send "Content-Type: application/json" without another charset.',
        );
      const headers: Record<string, string | undefined> = {};
      for (const [name, value] of Object.entries(event.headers ?? {})) {
        if (name.toLowerCase() !== 'content-type') headers[name] = value;
      }
      headers['content-type'] = 'application/json';
      event.headers = headers;
      event.multiValueHeaders = { ...event.multiValueHeaders, 'content-type': ['application/json'] };

      if (event.isBase64Encoded) {
        let text: string;
        try {
          text = STRICT_UTF8.decode(Buffer.from(body, 'base64'));
        } catch {
          throw new InvalidRequestError('The request body is not valid UTF-8 text.');
        }
        event.body = text;
        event.isBase64Encoded = false;
      }
      // U+FFFD in the raw text is what a lossy decode leaves (here API Gateway hands text bodies over
      // as strings, so bad bytes could be replaced before we see them): refused, never stored.
      if ((event.body ?? '').includes('\ufffd')) throw new InvalidRequestError('The request body is not valid UTF-8 text.');
      if (bytes === 0 || (event.body ?? '').trim() === '') throw new InvalidRequestError('A JSON request body is required.');
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
