import * as z from 'zod';
import { FILE_KEY_PATTERN } from './file-key.js';

/** The answer to an upload request: the schema is the one source of its type and its OpenAPI part. */
const FILE_KEY_EXAMPLE = 'invoices/cmp_4fZ0qR8sT2uV6wXy/7Gk2mP9qR4sT8vW1xY3zA5bC7dE9fG1h.pdf';

export const fileKeySchema = z.string().regex(FILE_KEY_PATTERN).meta({
  description:
    'Send it unchanged as `invoiceFileKey` when creating a case. Uploads made with a test key start `test-invoices/` and can be cited only by test-mode cases.',
  example: FILE_KEY_EXAMPLE,
});

export const uploadTicketSchema = z
  .object({
    fileKey: fileKeySchema,
    uploadUrl: z.url().meta({
      description:
        'Presigned S3 URL for the `PUT`, valid until `expiresAt`. Use it exactly as given and treat it as a secret until it expires.',
      example: `https://partner-case-invoices.s3.eu-west-2.amazonaws.com/${FILE_KEY_EXAMPLE}?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=900&X-Amz-SignedHeaders=content-length%3Bcontent-type%3Bhost%3Bif-none-match`,
    }),
    method: z.enum(['PUT']).meta({ description: 'The HTTP method for the upload.' }),
    headers: z
      .object({
        'Content-Type': z.string().meta({ description: 'The declared content type.', example: 'application/pdf' }),
        'Content-Length': z
          .string()
          .regex(/^[1-9]\d*$/)
          .meta({ description: 'The declared size in bytes.', example: '48213' }),
        'If-None-Match': z.enum(['*']).meta({
          description:
            'Creates the object only if none exists under `fileKey`: the URL cannot overwrite an upload (a second `PUT` gets 412 Precondition Failed). Required.',
          example: '*',
        }),
      })
      .meta({
        description:
          'Exactly the headers the `PUT` must send. All are signed: another type or size, or a missing `If-None-Match`, is refused by S3 (403).',
      }),
    expiresAt: z.iso
      .datetime()
      .meta({ description: 'When `uploadUrl` stops working (15 minutes after issue).', example: '2025-03-04T10:35:30.000Z' }),
  })
  .meta({
    id: 'UploadTicket',
    description: 'Where and how to upload the invoice file.',
    example: {
      fileKey: FILE_KEY_EXAMPLE,
      uploadUrl: `https://partner-case-invoices.s3.eu-west-2.amazonaws.com/${FILE_KEY_EXAMPLE}?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=900&X-Amz-SignedHeaders=content-length%3Bcontent-type%3Bhost%3Bif-none-match`,
      method: 'PUT',
      headers: { 'Content-Type': 'application/pdf', 'Content-Length': '48213', 'If-None-Match': '*' },
      expiresAt: '2025-03-04T10:35:30.000Z',
    },
  });
export type UploadTicket = z.infer<typeof uploadTicketSchema>;
