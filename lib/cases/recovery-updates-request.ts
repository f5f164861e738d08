import * as z from 'zod';
import { COMPANY_ID_PATTERN } from '../accounts/accounts-service.js';
import { unknownFieldErrors, type FieldError } from '../errors.js';
import type { RecoveryUpdateResultKind } from './apply-recovery-update.js';

/**
 * The envelope of `POST /internal/v1/recovery-updates` (the recovery back office, signed with AWS
 * IAM): `{ companyId, updates: [1..100] }`, nothing else. Only the envelope is checked here: a bad
 * envelope is a 400 for the whole request, while each update is checked on its own by
 * applyRecoveryUpdates (recovery.ts `recoveryUpdateSchema`), so one malformed update answers
 * `invalid` and never stops the others.
 */
export const MAX_RECOVERY_UPDATES = 100;

const FIELDS = ['companyId', 'updates'] as const;

export const recoveryUpdatesRequestSchema = /* @__PURE__ */ z.strictObject(
  {
    companyId: z
      .string({ error: (issue) => (issue.input === undefined ? 'companyId is required' : 'companyId must be a string') })
      .regex(COMPANY_ID_PATTERN, { error: 'companyId must be a company id (cmp_ and 16 letters or digits)' }),
    updates: z
      .array(z.unknown(), {
        error: (issue) => (issue.input === undefined ? 'updates is required' : 'updates must be an array of updates'),
      })
      .min(1, { error: 'updates must hold at least 1 update' })
      .max(MAX_RECOVERY_UPDATES, { error: `updates must hold at most ${MAX_RECOVERY_UPDATES} updates` }),
  },
  { error: (issue) => (issue.code === 'unrecognized_keys' ? 'unknown field' : 'the request body must be a JSON object') },
);
export type RecoveryUpdatesRequest = z.infer<typeof recoveryUpdatesRequestSchema>;

export type RecoveryUpdatesRequestParse = { ok: true; value: RecoveryUpdatesRequest } | { ok: false; errors: FieldError[] };

/** Validates a parsed JSON body's envelope. Pure. */
export function parseRecoveryUpdatesRequest(body: unknown): RecoveryUpdatesRequestParse {
  const result = recoveryUpdatesRequestSchema.safeParse(body);
  if (result.success) return { ok: true, value: result.data };
  const errors: FieldError[] = [];
  for (const issue of result.error.issues) {
    if (issue.code === 'unrecognized_keys')
      errors.push(...unknownFieldErrors(issue.keys, () => `unknown field; the allowed fields are ${FIELDS.join(', ')}`));
    else errors.push({ field: issue.path.map(String).join('.') || '(body)', message: issue.message });
  }
  return { ok: false, errors };
}

export const RECOVERY_UPDATE_RESULTS = [
  'applied',
  'already_applied',
  'not_found',
  'invalid_state',
  'invalid',
  'retry',
] as const satisfies readonly RecoveryUpdateResultKind[];

/**
 * One answer per update, in the order given. `updateId` is null only for an update so malformed
 * that it carries no string updateId. `message` says why, for every result but `applied` and
 * `already_applied`.
 */
export const recoveryUpdateResultSchema = /* @__PURE__ */ z.strictObject({
  updateId: z.string().nullable(),
  result: z.enum(RECOVERY_UPDATE_RESULTS),
  message: z
    .string()
    .optional()
    .meta({
      description:
        'Why the update was not applied: the fields to fix (`invalid`), the rule that refused it (`invalid_state`), ' +
        'or that sending it again with the same updateId is safe (`retry`).',
    }),
});
export const recoveryUpdatesResponseSchema = /* @__PURE__ */ z.strictObject({ results: z.array(recoveryUpdateResultSchema) });
export type RecoveryUpdatesResponse = z.infer<typeof recoveryUpdatesResponseSchema>;
