import * as z from 'zod';

/**
 * The one list of error codes the service itself can answer with, and the error classes that
 * carry them. A code is a stable UPPER_SNAKE string that partners switch on. These classes know
 * nothing of HTTP: the one mapper in the HTTP layer (`lib/http/problem-details.ts`) gives each code
 * its status, title and headers. Anything thrown that is not a CodedError becomes `INTERNAL`.
 *
 * Pure: the domain folders import this module, so it imports nothing but zod.
 */
export const ERROR_CODES = [
  'UNAUTHENTICATED',
  'INSUFFICIENT_SCOPE',
  'FORBIDDEN',
  'NOT_FOUND',
  'METHOD_NOT_ALLOWED',
  'IDEMPOTENCY_KEY_REUSED',
  'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  'INVALID_REQUEST',
  'INVALID_CURSOR',
  'BATCH_EMPTY',
  'BATCH_TOO_LARGE',
  'WEBHOOK_ENDPOINT_LIMIT_REACHED',
  'WEBHOOK_ENDPOINT_DISABLED',
  'CASE_NOT_OPEN',
  'INVALID_TRANSITION',
  'PAYMENT_EXCEEDS_OUTSTANDING',
  'PAYMENT_LIMIT_REACHED',
  'INTERNAL',
  'SERVICE_UNAVAILABLE',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

// Documentation only (OpenAPI, contract tests, types): marked pure so a bundle that does not use it drops it.
export const fieldErrorSchema = /* @__PURE__ */ z
  .object({
    field: z.string().meta({ description: 'The field, as a dotted path (`attestation.b2b`), or a header name.', example: 'debtorEmail' }),
    message: z.string().meta({ example: 'debtorEmail must be a valid e-mail address' }),
  })
  .meta({ id: 'FieldError', description: 'One problem with one field.' });
export type FieldError = z.infer<typeof fieldErrorSchema>;

/**
 * At most this many unknown fields are named in an `errors` list; the last entry says how many
 * more there were. Naming every one let 1 MiB of short unknown keys come back as ~7 MB of
 * `errors`, more than a Lambda response may hold (6 MB), which API Gateway turns into a 5xx.
 */
export const MAX_LISTED_UNKNOWN_FIELDS = 20;

/** One `errors` entry per unknown field, capped at MAX_LISTED_UNKNOWN_FIELDS. */
export function unknownFieldErrors(fields: readonly string[], message: (field: string) => string): FieldError[] {
  const listed = fields.slice(0, MAX_LISTED_UNKNOWN_FIELDS);
  const rest = fields.length - listed.length;
  return listed.map((field, i) => ({
    field,
    message: message(field) + (i === listed.length - 1 && rest > 0 ? ` (and ${rest} more unknown fields not listed)` : ''),
  }));
}

export interface CodedErrorOptions {
  /** Additive members of the answer (RFC 9457 "extension members" once mapped). */
  extensions?: Record<string, unknown>;
  /** When the caller may usefully try again, in seconds. */
  retryAfterSeconds?: number;
}

export class CodedError extends Error {
  readonly extensions: Record<string, unknown>;
  readonly retryAfterSeconds: number | undefined;

  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    options: CodedErrorOptions = {},
  ) {
    super(detail);
    this.name = new.target.name;
    this.extensions = options.extensions ?? {};
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

export class UnauthenticatedError extends CodedError {
  constructor() {
    // One identical answer for missing, malformed, unknown and revoked keys: the caller must not
    // be able to tell which it was.
    super('UNAUTHENTICATED', 'A valid API key is required: send it as "Authorization: Bearer <key>" or "X-Api-Key: <key>".');
  }
}

export class InsufficientScopeError extends CodedError {
  constructor(readonly requiredScope: string) {
    super('INSUFFICIENT_SCOPE', `This API key does not hold the scope "${requiredScope}" that this operation requires.`, {
      extensions: { requiredScope },
    });
  }
}

/**
 * The caller is not one this route serves: on the internal route, a request that reached the
 * function without an AWS IAM caller identity (API Gateway's AWS_IAM authorisation normally stops
 * it first; the handler refuses it again, in depth).
 */
export class ForbiddenError extends CodedError {
  constructor(detail: string) {
    super('FORBIDDEN', detail);
  }
}

export class NotFoundError extends CodedError {
  constructor(detail = 'The requested resource does not exist.') {
    super('NOT_FOUND', detail);
  }
}

export class InvalidRequestError extends CodedError {
  constructor(detail: string, errors?: FieldError[]) {
    super('INVALID_REQUEST', detail, errors ? { extensions: { errors } } : {});
  }
}

/** Why a list cursor was refused; said in the detail only (one code for all, as partners need only "start again"). */
export type InvalidCursorReason = 'unreadable' | 'foreign' | 'expired' | 'other-filters';

const INVALID_CURSOR_DETAILS: Readonly<Record<InvalidCursorReason, string>> = {
  unreadable: 'The cursor is not one this API issued, or it was altered. Pass nextCursor exactly as received.',
  foreign: 'The cursor was issued to another company. Start again without a cursor.',
  expired: 'The cursor has expired (cursors are valid for 24 hours). Start again without a cursor.',
  'other-filters': 'The cursor was issued for other filters. Repeat the filters of the first page, or start again without a cursor.',
};

export class InvalidCursorError extends CodedError {
  constructor(readonly reason: InvalidCursorReason) {
    super('INVALID_CURSOR', INVALID_CURSOR_DETAILS[reason]);
  }
}

export class BatchEmptyError extends CodedError {
  constructor() {
    super('BATCH_EMPTY', '"cases" must hold at least 1 case.');
  }
}

export class BatchTooLargeError extends CodedError {
  constructor(count: number, max: number) {
    super('BATCH_TOO_LARGE', `"cases" holds ${count} cases; at most ${max} are accepted per request.`, {
      extensions: { maxCases: max, receivedCases: count },
    });
  }
}

/** A company already has the most webhook endpoints one mode may hold (product rules "Webhooks"). */
export class WebhookEndpointLimitError extends CodedError {
  constructor(max: number) {
    super(
      'WEBHOOK_ENDPOINT_LIMIT_REACHED',
      `This company already has ${max} webhook endpoints in this mode, the most allowed. Delete one before creating another.`,
      { extensions: { maxEndpoints: max } },
    );
  }
}

/**
 * A redelivery was asked of a disabled endpoint (product rules "Webhooks"): nothing was queued.
 * Enabling it (PATCH `status: enabled`) comes first; a ping still reaches a disabled endpoint, to check a fix.
 */
export class WebhookEndpointDisabledError extends CodedError {
  constructor(endpointId: string) {
    super(
      'WEBHOOK_ENDPOINT_DISABLED',
      `The webhook endpoint ${endpointId} is disabled, so nothing was redelivered. Enable it (PATCH its status to "enabled") first; a ping reaches it meanwhile.`,
    );
  }
}

/** The case is final (`CLOSED` or `WITHDRAWN`): nothing moves it and no payment is accepted (product rules, "Recovery and money"). */
export class CaseNotOpenError extends CodedError {
  constructor(readonly status: string) {
    // `caseStatus`, not `status`: problem details' `status` is the HTTP status.
    super('CASE_NOT_OPEN', `The case is ${status}, which is final: it takes no further change or payment.`, {
      extensions: { caseStatus: status },
    });
  }
}

/** The rules do not allow this change from the case's current status (e.g. `recovery_started` of a case that is not READY). */
export class InvalidTransitionError extends CodedError {
  constructor(
    detail: string,
    readonly status: string,
  ) {
    super('INVALID_TRANSITION', detail, { extensions: { caseStatus: status } });
  }
}

/** A payment above the case's outstanding amount today; `outstanding` is the decimal string the case shows. */
export class PaymentExceedsOutstandingError extends CodedError {
  constructor(readonly outstanding: string) {
    super(
      'PAYMENT_EXCEEDS_OUTSTANDING',
      `The payment is more than the case's outstanding amount today, ${outstanding} GBP; nothing was recorded.`,
      {
        extensions: { outstanding },
      },
    );
  }
}

/** The case already holds the most payments a case may hold. */
export class PaymentLimitReachedError extends CodedError {
  constructor(max: number) {
    super('PAYMENT_LIMIT_REACHED', `The case already holds ${max} payments, the most a case may hold; nothing was recorded.`, {
      extensions: { maxPayments: max },
    });
  }
}

export type IdempotencyState = 'IN_PROGRESS' | 'COMPLETED';

export interface IdempotencyReplay {
  state: IdempotencyState;
  /** Whether the replayed request carries the same parsed body as the one that used the key. */
  sameRequest: boolean;
  /** The original answer's fields, when the first request finished (`created`/`rejected`, or `payment`/`case`). */
  original?: Record<string, unknown>;
  /** While the first request is still running: when it can no longer be (its claim's horizon). */
  retryAfterSeconds?: number;
}

export class IdempotencyKeyReusedError extends CodedError {
  constructor(replay: IdempotencyReplay) {
    const { state, sameRequest, original } = replay;
    super(
      'IDEMPOTENCY_KEY_REUSED',
      state === 'COMPLETED'
        ? 'This Idempotency-Key was already used; nothing new was created. The original result is included.'
        : 'A request with this Idempotency-Key is still being processed; nothing new was created. Retry later to receive its result.',
      {
        extensions: state === 'COMPLETED' && original ? { state, sameRequest, ...original } : { state, sameRequest },
        ...(state === 'IN_PROGRESS' ? { retryAfterSeconds: replay.retryAfterSeconds ?? 1 } : {}),
      },
    );
  }
}

/**
 * Storage could not answer in time (throttled, failing or slower than the request's deadline)
 * before anything was written: the request had no effect and may be retried as it is.
 */
/** What a partner is told to wait after a 503: long enough for a throttled partition to recover. */
export const SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS = 2;

export class ServiceUnavailableError extends CodedError {
  constructor(cause?: unknown, retryAfterSeconds = SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS) {
    super(
      'SERVICE_UNAVAILABLE',
      'Storage is temporarily unavailable and nothing was written. Retry after the Retry-After delay; with the same Idempotency-Key it is safe.',
      { retryAfterSeconds },
    );
    if (cause !== undefined) this.cause = cause;
  }
}
