import * as z from 'zod';
import { COMPANY_ID_PATTERN } from '../accounts/accounts-service.js';
import { unknownFieldErrors, type FieldError } from '../errors.js';
import { isWellFormedText } from '../text.js';
import { CASE_ID_EXAMPLE, CASE_ID_PATTERN, CASE_STATUSES } from './case-record.js';

/**
 * The body of `POST /internal/v1/confirmations` (the partner's dashboard, signed with AWS IAM):
 * `{ companyId, caseIds: [1..100], confirmedBy: { name, email } }`, nothing else. Every problem is
 * reported at once as `{ field, message }`, like the partner routes. A case id given twice in one
 * request is refused (400, naming the second occurrence): the dashboard sends each case once, and
 * answering one id with two results (`confirmed`, then `already_confirmed`) would only hide its bug.
 */
export const MAX_CONFIRMATION_CASE_IDS = 100;
export const MAX_CONFIRMED_BY_NAME_LENGTH = 200;

const FIELDS = ['companyId', 'caseIds', 'confirmedBy'] as const;
const CONFIRMED_BY_FIELDS = ['name', 'email'] as const;

/** C0 controls (U+0000–U+001F), DEL (U+007F) and C1 controls (U+0080–U+009F). */
function isControlCharacter(char: string): boolean {
  const code = char.charCodeAt(0);
  return code < 0x20 || (code >= 0x7f && code <= 0x9f);
}

function required(field: string, kind: string) {
  return (issue: { input: unknown }) => (issue.input === undefined ? `${field} is required` : `${field} must be ${kind}`);
}

/** Who confirmed, as the dashboard names its user: a readable name and an e-mail address. */
export const confirmedBySchema = /* @__PURE__ */ z.strictObject(
  {
    name: z
      .string({ error: required('confirmedBy.name', 'a string') })
      .refine((s) => s.trim().length > 0, { error: 'confirmedBy.name must not be empty or blank' })
      .refine((s) => [...s].length <= MAX_CONFIRMED_BY_NAME_LENGTH, {
        error: `confirmedBy.name must be at most ${MAX_CONFIRMED_BY_NAME_LENGTH} characters`,
      })
      .refine(isWellFormedText, { error: 'confirmedBy.name must be valid Unicode text' })
      .refine((s) => ![...s].some(isControlCharacter), { error: 'confirmedBy.name must not contain control characters' }),
    email: z
      .string({ error: required('confirmedBy.email', 'a string') })
      .max(254, { error: 'confirmedBy.email must be at most 254 characters' })
      .pipe(z.email({ error: 'confirmedBy.email must be a valid e-mail address' })),
  },
  { error: (issue) => (issue.code === 'unrecognized_keys' ? 'unknown field' : 'confirmedBy must be an object { name, email }') },
);

export const confirmationRequestSchema = /* @__PURE__ */ z.strictObject(
  {
    companyId: z
      .string({ error: required('companyId', 'a string') })
      .regex(COMPANY_ID_PATTERN, { error: 'companyId must be a company id (cmp_ and 16 letters or digits)' }),
    caseIds: z
      .array(
        z
          .string({ error: 'each case id must be a string' })
          .regex(CASE_ID_PATTERN, { error: `must be a case id such as ${CASE_ID_EXAMPLE}` }),
        {
          error: required('caseIds', 'an array of case ids'),
        },
      )
      .min(1, { error: 'caseIds must hold at least 1 case id' })
      .max(MAX_CONFIRMATION_CASE_IDS, { error: `caseIds must hold at most ${MAX_CONFIRMATION_CASE_IDS} case ids` })
      .superRefine((ids, ctx) => {
        const seen = new Set<string>();
        ids.forEach((id, i) => {
          if (seen.has(id)) ctx.addIssue({ code: 'custom', path: [i], message: `${id} is given more than once; send each case id once` });
          seen.add(id);
        });
      }),
    confirmedBy: confirmedBySchema,
  },
  { error: (issue) => (issue.code === 'unrecognized_keys' ? 'unknown field' : 'the request body must be a JSON object') },
);

export type ConfirmationRequest = z.infer<typeof confirmationRequestSchema>;

export type ConfirmationRequestParse = { ok: true; value: ConfirmationRequest } | { ok: false; errors: FieldError[] };

/** Validates a parsed JSON body. Pure. */
export function parseConfirmationRequest(body: unknown): ConfirmationRequestParse {
  const result = confirmationRequestSchema.safeParse(body);
  if (result.success) return { ok: true, value: result.data };
  const errors: FieldError[] = [];
  for (const issue of result.error.issues) {
    const field = issue.path.map(String).join('.') || '(body)';
    if (issue.code === 'unrecognized_keys') {
      const allowed = issue.path.length ? CONFIRMED_BY_FIELDS : FIELDS;
      const prefix = issue.path.length ? `${field}.` : '';
      errors.push(
        ...unknownFieldErrors(
          issue.keys.map((k) => prefix + k),
          () => `unknown field; the allowed fields are ${allowed.join(', ')}`,
        ),
      );
    } else {
      errors.push({ field, message: issue.message });
    }
  }
  return { ok: false, errors };
}

export const CONFIRMATION_RESULTS = ['confirmed', 'already_confirmed', 'not_awaiting', 'not_found', 'retry'] as const;

/**
 * One answer per case id, in the order given; `status` (the case's status after) when the case was
 * found; `message` with `retry` (storage could not answer for this case in time: send its id again).
 */
export const confirmationResultSchema = /* @__PURE__ */ z.object({
  caseId: z.string(),
  result: z.enum(CONFIRMATION_RESULTS),
  status: z.enum(CASE_STATUSES).optional(),
  message: z.string().optional().meta({ description: 'With `retry` only: why, and that sending the case id again is safe.' }),
});
export const confirmationResponseSchema = /* @__PURE__ */ z.object({ results: z.array(confirmationResultSchema) });
export type ConfirmationResponse = z.infer<typeof confirmationResponseSchema>;
