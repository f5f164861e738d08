import { randomBase62 } from '../random-id.js';
import { COMPANY_ID_PATTERN } from '../accounts/accounts-service.js';
import { MODES, type Mode } from '../mode.js';

/**
 * The invoice fileKey: the one place that knows its shape, issues it and checks it.
 *
 *   invoices/<companyId>/<fileId>.<ext>        (live)
 *   test-invoices/<companyId>/<fileId>.<ext>   (test mode)
 *   e.g. invoices/cmp_4fZ0qR8sT2uV6wXy/7Gk2mP9qR4sT8vW1xY3zA5bC7dE9fG1h.pdf
 *
 * - `invoices/`   fixed top segment (lower case), one per mode (FILE_KEY_PREFIXES): test uploads
 *                 have a prefix of their own, so IAM, lifecycle rules and `company
 *                 clear-test-data` can name them, and a key of one mode is refused in the other
 *                 exactly like another company's (OTHER_COMPANY).
 * - `<companyId>` the authenticated caller's company (`cmp_` + 16 base62), never request input.
 *                 It is the tenancy boundary: a key is valid only for the company in its prefix.
 * - `<fileId>`    32 base62 characters from the CSPRNG (62^32 ≈ 2^190): unguessable, never reused.
 * - `<ext>`       from the declared content type only: pdf, png or jpg.
 *
 * The partner's fileName never becomes part of the key (it is kept as object metadata, see
 * upload-service.ts), so the key is pure ASCII `[A-Za-z0-9_/.-]`, exactly 66 characters long
 * (71 in test mode).
 *
 * API (used by POST /api/v1/uploads and by batch creation for INVALID_FILE_KEY):
 *   issueFileKey(companyId, contentType, fileId?, mode?)  -> string   new key for an upload
 *   parseFileKey(key)                              -> ParsedFileKey | undefined  (shape only)
 *   validateFileKey(key, companyId, mode?)         -> { ok: true } | { ok: false, reason, message }
 *   fileKeyProblem(key, companyId, mode?)          -> string | undefined  (message for INVALID_FILE_KEY)
 * `mode` defaults to live.
 * Existence (FILE_NOT_UPLOADED) is a storage question: see `InvoiceFileStore` in file-store.ts.
 */

export const UPLOAD_CONTENT_TYPES = ['application/pdf', 'image/png', 'image/jpeg'] as const;
export type UploadContentType = (typeof UPLOAD_CONTENT_TYPES)[number];

export const EXTENSION_BY_CONTENT_TYPE: Readonly<Record<UploadContentType, FileExtension>> = {
  'application/pdf': 'pdf',
  'image/png': 'png',
  'image/jpeg': 'jpg',
};
export type FileExtension = 'pdf' | 'png' | 'jpg';

const CONTENT_TYPE_BY_EXTENSION: Readonly<Record<FileExtension, UploadContentType>> = {
  pdf: 'application/pdf',
  png: 'image/png',
  jpg: 'image/jpeg',
};

export const FILE_KEY_PREFIXES: Readonly<Record<Mode, string>> = { live: 'invoices/', test: 'test-invoices/' };
/** The live prefix (the shape every key had before test mode). */
export const FILE_KEY_PREFIX = FILE_KEY_PREFIXES.live;
export const FILE_ID_LENGTH = 32;
const LENGTH_AFTER_PREFIX = 'cmp_'.length + 16 + 1 + FILE_ID_LENGTH + '.pdf'.length;
/** The only length a well-formed live key can have. */
export const FILE_KEY_LENGTH = FILE_KEY_PREFIX.length + LENGTH_AFTER_PREFIX;
/** The longest well-formed key of any mode. */
export const MAX_FILE_KEY_LENGTH = Math.max(...Object.values(FILE_KEY_PREFIXES).map((p) => p.length + LENGTH_AFTER_PREFIX));
/** The objects of a company's test uploads (what `company clear-test-data` deletes). */
export function testUploadsPrefix(companyId: string): string {
  if (!COMPANY_ID_PATTERN.test(companyId)) throw new Error('testUploadsPrefix: not a company id');
  return `${FILE_KEY_PREFIXES.test}${companyId}/`;
}

/** Longer input is refused unread (bounds the work done on hostile input). */
export const MAX_INSPECTED_KEY_LENGTH = 1024;

/** The whole key, anchored, over an ASCII allow-list: no other character can ever match. */
export const FILE_KEY_PATTERN = new RegExp(
  `^(invoices|test-invoices)/(cmp_[0-9A-Za-z]{16})/([0-9A-Za-z]{${FILE_ID_LENGTH}})\\.(pdf|png|jpg)$`,
);

export interface ParsedFileKey {
  mode: Mode;
  companyId: string;
  fileId: string;
  extension: FileExtension;
  contentType: UploadContentType;
}

export type FileKeyRejection =
  | 'NOT_A_STRING'
  | 'EMPTY'
  | 'TOO_LONG'
  | 'NOT_ASCII'
  | 'CONTROL_OR_WHITESPACE'
  | 'LEADING_SLASH'
  | 'BACKSLASH'
  | 'ENCODED'
  | 'TRAVERSAL'
  | 'EMPTY_SEGMENT'
  | 'MALFORMED'
  | 'OTHER_COMPANY'
  | 'OTHER_MODE';

export type FileKeyValidation = { ok: true } | { ok: false; reason: FileKeyRejection; message: string };

const ISSUED_BY = 'use the fileKey returned by POST /api/v1/uploads unchanged';

/** Fixed messages; OTHER_MODE's names the modes (otherModeMessage). */
const MESSAGES: Record<Exclude<FileKeyRejection, 'OTHER_MODE'>, string> = {
  NOT_A_STRING: `invoiceFileKey must be a string; ${ISSUED_BY}`,
  EMPTY: `invoiceFileKey is empty; ${ISSUED_BY}`,
  TOO_LONG: `invoiceFileKey is longer than any fileKey this service issues; ${ISSUED_BY}`,
  NOT_ASCII: `invoiceFileKey contains characters a fileKey never has; ${ISSUED_BY}`,
  CONTROL_OR_WHITESPACE: `invoiceFileKey contains whitespace or control characters; ${ISSUED_BY}`,
  LEADING_SLASH: `invoiceFileKey must not start with "/"; ${ISSUED_BY}`,
  BACKSLASH: `invoiceFileKey must not contain "\\"; ${ISSUED_BY}`,
  ENCODED: `invoiceFileKey must not be percent-encoded; ${ISSUED_BY}`,
  TRAVERSAL: `invoiceFileKey must not contain ".." segments; ${ISSUED_BY}`,
  EMPTY_SEGMENT: `invoiceFileKey must not contain empty segments ("//" or a trailing "/"); ${ISSUED_BY}`,
  MALFORMED: `invoiceFileKey is not a fileKey issued by this service; ${ISSUED_BY}`,
  OTHER_COMPANY: `invoiceFileKey was not issued to your company; ${ISSUED_BY}`,
};

/**
 * The caller's own company, but the other mode's upload: said plainly (it is the caller's own
 * file, so nothing about another tenant is revealed), naming both modes, so a partner switching
 * keys sees at once why a file it did upload is refused.
 */
function otherModeMessage(uploadMode: Mode, caseMode: Mode): string {
  return `invoiceFileKey was uploaded with a ${uploadMode}-mode key and cannot be cited by a ${caseMode}-mode case; upload the file again with your ${caseMode}-mode key and use that fileKey`;
}

/** A new, never-before-seen key under the company's prefix. `fileId` is for tests only. */
export function issueFileKey(
  companyId: string,
  contentType: UploadContentType,
  fileId: string = randomBase62(FILE_ID_LENGTH),
  mode: Mode = 'live',
): string {
  // The company id comes from authentication; refuse to build a key from anything else.
  if (!COMPANY_ID_PATTERN.test(companyId)) throw new Error('issueFileKey: not a company id');
  const extension = EXTENSION_BY_CONTENT_TYPE[contentType];
  if (extension === undefined) throw new Error('issueFileKey: unsupported content type');
  const key = `${FILE_KEY_PREFIXES[mode]}${companyId}/${fileId}.${extension}`;
  if (!FILE_KEY_PATTERN.test(key)) throw new Error('issueFileKey: malformed file id');
  return key;
}

/** The parts of a well-formed key, or undefined. Says nothing about which company may use it. */
export function parseFileKey(key: unknown): ParsedFileKey | undefined {
  if (typeof key !== 'string' || key.length > MAX_FILE_KEY_LENGTH) return undefined;
  const match = FILE_KEY_PATTERN.exec(key);
  if (!match) return undefined;
  const [, top, companyId, fileId, extension] = match as unknown as [string, string, string, string, FileExtension];
  return { mode: top === 'invoices' ? 'live' : 'test', companyId, fileId, extension, contentType: CONTENT_TYPE_BY_EXTENSION[extension] };
}

/** C0 controls, DEL, C1 controls, or any Unicode white space. */
function hasControlOrWhitespace(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) return true;
  }
  return /\s/u.test(text);
}

function reject(reason: keyof typeof MESSAGES): FileKeyValidation {
  return { ok: false, reason, message: MESSAGES[reason] };
}

/**
 * Whether `key` is one this service could have issued to `companyId`. The decision rests on the
 * anchored allow-list pattern alone (plus the company match); the specific checks before it only
 * choose a more helpful reason for common mistakes and attacks. Pure: no storage access.
 */
export function validateFileKey(key: unknown, companyId: string, mode: Mode = 'live'): FileKeyValidation {
  if (typeof key !== 'string') return reject('NOT_A_STRING');
  if (key.length === 0) return reject('EMPTY');
  if (key.length > MAX_INSPECTED_KEY_LENGTH) return reject('TOO_LONG');
  if (hasControlOrWhitespace(key)) return reject('CONTROL_OR_WHITESPACE');
  if (/[^\x21-\x7e]/.test(key)) return reject('NOT_ASCII');
  if (key.startsWith('/')) return reject('LEADING_SLASH');
  if (key.includes('\\')) return reject('BACKSLASH');
  if (key.includes('%')) return reject('ENCODED');
  if (key.split('/').some((segment) => segment === '..' || segment === '.')) return reject('TRAVERSAL');
  if (key.includes('//') || key.endsWith('/')) return reject('EMPTY_SEGMENT');
  // Longer than a key of the mode its prefix names (any other top segment: than the longest key).
  const named = MODES.find((m) => key.startsWith(FILE_KEY_PREFIXES[m]));
  if (key.length > (named === undefined ? MAX_FILE_KEY_LENGTH : FILE_KEY_PREFIXES[named].length + LENGTH_AFTER_PREFIX))
    return reject('TOO_LONG');
  const parsed = parseFileKey(key);
  if (!parsed) return reject('MALFORMED');
  if (!COMPANY_ID_PATTERN.test(companyId) || parsed.companyId !== companyId) return reject('OTHER_COMPANY');
  // Test mode is another world: the other mode's upload is refused too, with a message naming the modes.
  if (parsed.mode !== mode) return { ok: false, reason: 'OTHER_MODE', message: otherModeMessage(parsed.mode, mode) };
  return { ok: true };
}

/** The INVALID_FILE_KEY message for this key and company, or undefined when the key is valid. */
export function fileKeyProblem(key: unknown, companyId: string, mode: Mode = 'live'): string | undefined {
  const result = validateFileKey(key, companyId, mode);
  return result.ok ? undefined : result.message;
}
