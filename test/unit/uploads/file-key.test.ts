import {
  FILE_KEY_LENGTH,
  fileKeyProblem,
  issueFileKey,
  parseFileKey,
  validateFileKey,
  type FileKeyRejection,
} from '../../../lib/uploads/file-key.js';

const COMPANY_A = 'cmp_AAAAaaaa00001111';
const COMPANY_B = 'cmp_BBBBbbbb22223333';
const FILE_ID = '7Gk2mP9qR4sT8vW1xY3zA5bC7dE9fG1h';
const GOOD = `invoices/${COMPANY_A}/${FILE_ID}.pdf`;

describe('the fileKey issued for an invoice upload', () => {
  it('lies under invoices/<your company id>/ with a random name and the extension of the content type', () => {
    expect(issueFileKey(COMPANY_A, 'application/pdf')).toMatch(/^invoices\/cmp_AAAAaaaa00001111\/[0-9A-Za-z]{32}\.pdf$/);
    expect(issueFileKey(COMPANY_A, 'image/png')).toMatch(/\.png$/);
    expect(issueFileKey(COMPANY_A, 'image/jpeg')).toMatch(/\.jpg$/);
  });

  it('is different every time, even for the same company and content type', () => {
    const keys = new Set(Array.from({ length: 1000 }, () => issueFileKey(COMPANY_A, 'application/pdf')));
    expect(keys.size).toBe(1000);
  });

  it('always has the one fixed length and is accepted for the company it was issued to', () => {
    const key = issueFileKey(COMPANY_A, 'image/png');
    expect(key).toHaveLength(FILE_KEY_LENGTH);
    expect(validateFileKey(key, COMPANY_A)).toEqual({ ok: true });
    expect(fileKeyProblem(key, COMPANY_A)).toBeUndefined();
  });

  it('cannot be issued for something that is not a company id', () => {
    expect(() => issueFileKey('../cmp_AAAAaaaa00001111', 'application/pdf')).toThrow();
    expect(() => issueFileKey(COMPANY_A, 'application/pdf', '../../x')).toThrow();
  });

  it('of a test-mode upload has its own prefix, and is refused in live mode (and the other way round) with a message naming the modes', () => {
    const test = issueFileKey(COMPANY_A, 'application/pdf', FILE_ID, 'test');
    expect(test).toBe(`test-invoices/${COMPANY_A}/${FILE_ID}.pdf`);
    expect(parseFileKey(test)).toMatchObject({ mode: 'test', companyId: COMPANY_A });
    expect(validateFileKey(test, COMPANY_A, 'test')).toEqual({ ok: true });
    expect(validateFileKey(test, COMPANY_A, 'live')).toEqual({
      ok: false,
      reason: 'OTHER_MODE',
      message:
        'invoiceFileKey was uploaded with a test-mode key and cannot be cited by a live-mode case; upload the file again with your live-mode key and use that fileKey',
    });
    expect(validateFileKey(GOOD, COMPANY_A, 'test')).toMatchObject({ ok: false, reason: 'OTHER_MODE' });
    expect(fileKeyProblem(GOOD, COMPANY_A, 'test')).toMatch(
      /^invoiceFileKey was uploaded with a live-mode key and cannot be cited by a test-mode case;/,
    );
    expect(fileKeyProblem(GOOD, COMPANY_A, 'test')).not.toMatch(/not issued to your company/);
    // Another company's upload of the other mode is still just another company's.
    expect(validateFileKey(test, COMPANY_B, 'live')).toMatchObject({ ok: false, reason: 'OTHER_COMPANY' });
    expect(validateFileKey(`${test.slice(0, -4)}a.pdf`, COMPANY_A, 'test')).toMatchObject({ ok: false, reason: 'TOO_LONG' });
  });

  it('parses into company, file id, extension and content type', () => {
    expect(parseFileKey(GOOD)).toEqual({
      mode: 'live',
      companyId: COMPANY_A,
      fileId: FILE_ID,
      extension: 'pdf',
      contentType: 'application/pdf',
    });
    expect(parseFileKey(`invoices/${COMPANY_A}/${FILE_ID}.jpg`)?.contentType).toBe('image/jpeg');
    expect(parseFileKey('invoices/x.pdf')).toBeUndefined();
    expect(parseFileKey(42)).toBeUndefined();
  });

  it('issued to company A is refused for company B', () => {
    const key = issueFileKey(COMPANY_A, 'application/pdf');
    expect(validateFileKey(key, COMPANY_B)).toMatchObject({ ok: false, reason: 'OTHER_COMPANY' });
    expect(fileKeyProblem(key, COMPANY_B)).toMatch(/not issued to your company/);
  });
});

describe('a hostile or mistyped invoiceFileKey is refused', () => {
  const hostile: [string, unknown, FileKeyRejection][] = [
    ['path traversal with ..', `invoices/${COMPANY_A}/../${COMPANY_B}/${FILE_ID}.pdf`, 'TRAVERSAL'],
    ['a short traversal', '../../etc/passwd', 'TRAVERSAL'],
    ['traversal in the company segment', `invoices/../${FILE_ID}.pdf`, 'TRAVERSAL'],
    ['a "." segment', `invoices/./${FILE_ID}.pdf`, 'TRAVERSAL'],
    ['an encoded slash %2F', `invoices%2F${COMPANY_A}%2F${FILE_ID}.pdf`, 'ENCODED'],
    ['encoded dots %2e%2e', `invoices/%2e%2e/${FILE_ID}.pdf`, 'ENCODED'],
    ['a doubled slash', `invoices//${COMPANY_A}/${FILE_ID}.pdf`, 'EMPTY_SEGMENT'],
    ['a doubled slash before the file name', `invoices/${COMPANY_A}//${FILE_ID}.pdf`, 'EMPTY_SEGMENT'],
    ['a backslash separator', `invoices\\${COMPANY_A}\\${FILE_ID}.pdf`, 'BACKSLASH'],
    ['an absolute key', `/invoices/${COMPANY_A}/${FILE_ID}.pdf`, 'LEADING_SLASH'],
    ['another company\u2019s prefix', `invoices/${COMPANY_B}/${FILE_ID}.pdf`, 'OTHER_COMPANY'],
    ['a wrong top segment', `uploads/${COMPANY_A}/${FILE_ID}X.pdf`, 'MALFORMED'],
    ['an upper-case top segment', `INVOICES/${COMPANY_A}/${FILE_ID}.pdf`, 'MALFORMED'],
    ['a capitalised top segment', `Invoices/${COMPANY_A}/${FILE_ID}.pdf`, 'MALFORMED'],
    ['an upper-case company prefix', `invoices/CMP_AAAAaaaa00001111/${FILE_ID}.pdf`, 'MALFORMED'],
    ['a missing extension', `invoices/${COMPANY_A}/${FILE_ID}XYZA`, 'MALFORMED'],
    ['an unsupported extension', `invoices/${COMPANY_A}/${FILE_ID}.exe`, 'MALFORMED'],
    ['an upper-case extension', `invoices/${COMPANY_A}/${FILE_ID}.PDF`, 'MALFORMED'],
    ['a double extension', `invoices/${COMPANY_A}/${FILE_ID.slice(4)}.pdf.pdf`, 'MALFORMED'],
    ['a zero-width space', `invoices/${COMPANY_A}/${FILE_ID.slice(1)}\u200b.pdf`, 'NOT_ASCII'],
    ['a file id that is too short', `invoices/${COMPANY_A}/abc.pdf`, 'MALFORMED'],
    ['an overlong key', `invoices/${COMPANY_A}/${'a'.repeat(5000)}.pdf`, 'TOO_LONG'],
    ['a fullwidth solidus lookalike', `invoices\uFF0F${COMPANY_A}\uFF0F${FILE_ID}.pdf`, 'NOT_ASCII'],
    ['a fullwidth full stop lookalike', `invoices/${COMPANY_A}/${FILE_ID}\uFF0Epdf`, 'NOT_ASCII'],
    ['a Cyrillic lookalike letter', `invoices/${COMPANY_A}/${FILE_ID}.\u0440df`, 'NOT_ASCII'],
    ['a NUL character', `${GOOD}\u0000`, 'CONTROL_OR_WHITESPACE'],
    ['a NUL before the extension', `invoices/${COMPANY_A}/${FILE_ID}\u0000.pdf`, 'CONTROL_OR_WHITESPACE'],
    ['a trailing space', `${GOOD} `, 'CONTROL_OR_WHITESPACE'],
    ['a leading space', ` ${GOOD}`, 'CONTROL_OR_WHITESPACE'],
    ['a line break', `invoices/${COMPANY_A}/\n${FILE_ID}.pdf`, 'CONTROL_OR_WHITESPACE'],
    ['a non-breaking space', `invoices/${COMPANY_A}/${FILE_ID}\u00a0.pdf`, 'CONTROL_OR_WHITESPACE'],
    ['a trailing slash', `${GOOD}/`, 'EMPTY_SEGMENT'],
    ['a key one character too long', `invoices/${COMPANY_A}/${FILE_ID}a.pdf`, 'TOO_LONG'],
    ['the company prefix alone', `invoices/${COMPANY_A}/`, 'EMPTY_SEGMENT'],
    ['an S3 URL instead of a key', `s3://bucket/invoices/${COMPANY_A}/x.pdf`, 'EMPTY_SEGMENT'],
    ['an empty string', '', 'EMPTY'],
    ['a number', 12345, 'NOT_A_STRING'],
    ['null', null, 'NOT_A_STRING'],
  ];

  it.each(hostile)('%s', (_name, key, reason) => {
    const result = validateFileKey(key, COMPANY_A);
    expect(result).toMatchObject({ ok: false, reason });
    expect(fileKeyProblem(key, COMPANY_A)).toEqual(expect.any(String));
  });

  it('whatever the reason, the message tells the partner to use the issued fileKey unchanged', () => {
    for (const [, key] of hostile) expect(fileKeyProblem(key, COMPANY_A)).toMatch(/POST \/api\/v1\/uploads/);
  });

  it('a key is refused outright when the caller has no valid company id', () => {
    expect(validateFileKey(GOOD, 'cmp_')).toMatchObject({ ok: false, reason: 'OTHER_COMPANY' });
  });
});
