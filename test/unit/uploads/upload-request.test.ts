import { MAX_UPLOAD_BYTES, parseUploadRequest } from '../../../lib/uploads/upload-request.js';

const valid = { fileName: 'invoice-2025-001.pdf', contentType: 'application/pdf', contentLength: 48_213 };

function fieldsOf(body: unknown): string[] {
  const result = parseUploadRequest(body);
  if (result.ok) throw new Error('expected a rejection');
  return result.errors.map((e) => e.field);
}

describe('the upload request', () => {
  it('accepts a PDF, a PNG or a JPEG of 1 byte to 10 MiB', () => {
    expect(parseUploadRequest(valid)).toEqual({ ok: true, value: valid });
    expect(parseUploadRequest({ ...valid, contentType: 'image/png', contentLength: 1 }).ok).toBe(true);
    expect(parseUploadRequest({ ...valid, contentType: 'image/jpeg', contentLength: MAX_UPLOAD_BYTES }).ok).toBe(true);
  });

  it('accepts a file name in any script, with spaces and dots', () => {
    expect(parseUploadRequest({ ...valid, fileName: 'Rechnung März 2025 – Nr. 7 ✓.pdf' }).ok).toBe(true);
    expect(parseUploadRequest({ ...valid, fileName: '請求書.pdf' }).ok).toBe(true);
    expect(parseUploadRequest({ ...valid, fileName: '../../etc/passwd' }).ok).toBe(true);
  });

  it('counts the 255-character limit in characters, not bytes', () => {
    expect(parseUploadRequest({ ...valid, fileName: '€'.repeat(255) }).ok).toBe(true);
    expect(parseUploadRequest({ ...valid, fileName: '😀'.repeat(255) }).ok).toBe(true);
    expect(fieldsOf({ ...valid, fileName: 'a'.repeat(256) })).toEqual(['fileName']);
  });

  it.each([
    ['a missing fileName', { contentType: 'application/pdf', contentLength: 1 }, 'fileName', /required/],
    ['a fileName that is not a string', { ...valid, fileName: 7 }, 'fileName', /string/],
    ['an empty fileName', { ...valid, fileName: '' }, 'fileName', /empty/],
    ['a blank fileName', { ...valid, fileName: '  \t ' }, 'fileName', /control|blank/],
    ['a fileName with a NUL', { ...valid, fileName: 'a\u0000.pdf' }, 'fileName', /control/],
    ['a fileName with a line break', { ...valid, fileName: 'a\n.pdf' }, 'fileName', /control/],
    ['a fileName with DEL', { ...valid, fileName: 'a\u007f.pdf' }, 'fileName', /control/],
    ['a fileName with a C1 control', { ...valid, fileName: 'a\u0085.pdf' }, 'fileName', /control/],
    ['a fileName with a lone surrogate', { ...valid, fileName: 'a\ud800.pdf' }, 'fileName', /Unicode/],
    ['a missing contentType', { fileName: 'a.pdf', contentLength: 1 }, 'contentType', /required/],
    [
      'an unsupported contentType',
      { ...valid, contentType: 'application/zip' },
      'contentType',
      /one of application\/pdf, image\/png, image\/jpeg/,
    ],
    ['a contentType in upper case', { ...valid, contentType: 'APPLICATION/PDF' }, 'contentType', /one of/],
    ['a contentType with parameters', { ...valid, contentType: 'application/pdf; charset=binary' }, 'contentType', /one of/],
    ['a missing contentLength', { fileName: 'a.pdf', contentType: 'application/pdf' }, 'contentLength', /required/],
    ['a contentLength of 0', { ...valid, contentLength: 0 }, 'contentLength', /at least 1/],
    ['a contentLength over 10 MiB', { ...valid, contentLength: MAX_UPLOAD_BYTES + 1 }, 'contentLength', /at most 10485760/],
    ['a fractional contentLength', { ...valid, contentLength: 1.5 }, 'contentLength', /whole number/],
    ['a contentLength given as a string', { ...valid, contentLength: '100' }, 'contentLength', /whole number/],
    ['an unknown field', { ...valid, fileKey: 'invoices/x' }, 'fileKey', /unknown field/],
  ])('refuses %s, naming the field', (_name, body, field, message) => {
    const result = parseUploadRequest(body);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors).toContainEqual({ field, message: expect.stringMatching(message) });
  });

  it('reports every problem at once', () => {
    expect(fieldsOf({ fileName: '', contentType: 'text/plain', contentLength: 0, extra: 1, another: 2 }).sort()).toEqual(
      ['another', 'contentLength', 'contentType', 'extra', 'fileName'].sort(),
    );
  });
});
