import * as z from 'zod';
import { unknownFieldErrors, type FieldError } from '../errors.js';
import { isWellFormedText } from '../text.js';
import { UPLOAD_CONTENT_TYPES } from './file-key.js';

/**
 * The body of POST /api/v1/uploads: `{ fileName, contentType, contentLength }`, nothing else.
 * Every problem is reported at once, as `{ field, message }`, so a partner fixes all in one go.
 */
export const MAX_UPLOAD_BYTES = 10 * 1024 * 1024;
export const MAX_FILE_NAME_LENGTH = 255;

export type UploadRequestParse = { ok: true; value: UploadRequest } | { ok: false; errors: FieldError[] };

const FIELDS = ['fileName', 'contentType', 'contentLength'] as const;

/** C0 controls (U+0000–U+001F), DEL (U+007F) and C1 controls (U+0080–U+009F). */
function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) return true;
  }
  return false;
}

function required(field: string, kind: string) {
  return (issue: { input: unknown }) => (issue.input === undefined ? `${field} is required` : `${field} must be ${kind}`);
}

export const uploadRequestSchema = z.strictObject(
  {
    fileName: z.string({ error: required('fileName', 'a string') }).superRefine((value, ctx) => {
      const length = [...value].length;
      if (length === 0 || value.trim().length === 0) {
        ctx.addIssue({ code: 'custom', message: 'fileName must not be empty or blank' });
      } else if (length > MAX_FILE_NAME_LENGTH) {
        ctx.addIssue({ code: 'custom', message: `fileName must be at most ${MAX_FILE_NAME_LENGTH} characters (got ${length})` });
      }
      if (hasControlCharacter(value)) ctx.addIssue({ code: 'custom', message: 'fileName must not contain control characters' });
      if (!isWellFormedText(value)) ctx.addIssue({ code: 'custom', message: 'fileName must be valid Unicode text' });
    }),
    contentType: z.enum(UPLOAD_CONTENT_TYPES, {
      error: (issue) =>
        issue.input === undefined ? 'contentType is required' : `contentType must be one of ${UPLOAD_CONTENT_TYPES.join(', ')}`,
    }),
    contentLength: z
      .number({ error: required('contentLength', 'a whole number of bytes') })
      .int({ error: 'contentLength must be a whole number of bytes' })
      .min(1, { error: 'contentLength must be at least 1 byte' })
      .max(MAX_UPLOAD_BYTES, { error: `contentLength must be at most ${MAX_UPLOAD_BYTES} bytes (10 MiB)` }),
  },
  { error: (issue) => (issue.code === 'unrecognized_keys' ? 'unknown field' : 'the request body must be a JSON object') },
);

export type UploadRequest = z.infer<typeof uploadRequestSchema>;

/** Validates a parsed JSON body. Pure. */
export function parseUploadRequest(body: unknown): UploadRequestParse {
  const result = uploadRequestSchema.safeParse(body);
  if (result.success) return { ok: true, value: result.data };
  const errors: FieldError[] = [];
  for (const issue of result.error.issues) {
    if (issue.code === 'unrecognized_keys') {
      errors.push(...unknownFieldErrors(issue.keys, () => `unknown field; the allowed fields are ${FIELDS.join(', ')}`));
    } else {
      errors.push({ field: issue.path.map(String).join('.') || '(body)', message: issue.message });
    }
  }
  return { ok: false, errors };
}
