import { MAX_FILE_NAME_LENGTH, MAX_UPLOAD_BYTES, uploadRequestSchema } from '../../../lib/uploads/upload-request.js';
import { uploadTicketSchema } from '../../../lib/uploads/upload-ticket.js';
import { invalidRequestProblemSchema } from '../../../lib/http/response-schemas.js';
import {
  BODY_PROBLEMS,
  example,
  invalidRequestExample,
  json,
  mebibytes,
  problem,
  documented,
  jsonBody,
  type OperationDoc,
} from './components.js';

/** The upload request: the handler's schema, with what its refinements enforce. */
export const uploadRequestDocSchema = uploadRequestSchema
  .extend(
    documented(uploadRequestSchema.shape, {
      fileName: {
        minLength: 1,
        maxLength: MAX_FILE_NAME_LENGTH,
        description: 'The file name, kept as metadata only: not blank, no control characters.',
        example: 'INV-2025-0042.pdf',
      },
      contentType: { description: 'The file type; the upload must send exactly this `Content-Type`.', example: 'application/pdf' },
      contentLength: {
        description: `The file size in bytes (at most ${MAX_UPLOAD_BYTES}, ${mebibytes(MAX_UPLOAD_BYTES)}); the upload must send exactly this size.`,
        example: 48213,
      },
    }),
  )
  .meta({ id: 'UploadRequest', description: 'Exactly these three members; any other is refused.' });

export const UPLOAD_OPERATIONS: Record<string, OperationDoc> = {
  CreateUpload: {
    tag: 'Uploads',
    description:
      'Returns a `fileKey` and a presigned S3 `PUT` URL. `PUT` the file bytes to `uploadUrl` with exactly the `headers` given, before `expiresAt`; then cite `fileKey` as `invoiceFileKey` when creating a case. Issuing an upload writes nothing.',
    request: jsonBody(uploadRequestDocSchema, {
      pdf: { summary: 'A PDF invoice', value: { fileName: 'INV-2025-0042.pdf', contentType: 'application/pdf', contentLength: 48213 } },
    }),
    responses: {
      201: json('The upload ticket.', uploadTicketSchema, {
        pdf: { summary: 'A presigned PUT for a PDF', value: example(uploadTicketSchema) },
      }),
    },
    problems: ['INVALID_REQUEST', ...BODY_PROBLEMS, 'SERVICE_UNAVAILABLE'],
    problemResponses: {
      400: problem(
        'The body is not JSON, not an object, or a field breaks the rules; `errors` lists every problem.',
        invalidRequestProblemSchema,
        {},
        {
          invalidFields: {
            summary: 'Two fields to fix',
            value: invalidRequestExample(example(invalidRequestProblemSchema).detail as string, [
              { field: 'contentType', message: 'contentType must be one of application/pdf, image/png, image/jpeg' },
              {
                field: 'contentLength',
                message: `contentLength must be at most ${MAX_UPLOAD_BYTES} bytes (${mebibytes(MAX_UPLOAD_BYTES)})`,
              },
            ]),
          },
        },
      ),
    },
  },
};
