import type { ApiKeyStore } from '../lib/data/api-key-store.js';
import { defaultTableStores } from '../lib/data/stores.js';
import { InvalidRequestError } from '../lib/errors.js';
import { apiHandler, jsonResponse, type CoreHandler } from '../lib/middleware/api-handler.js';
import { authOf } from '../lib/middleware/types.js';
import { parseUploadRequest } from '../lib/uploads/upload-request.js';
import { defaultUploadService, type UploadService } from '../lib/uploads/upload-service.js';

/**
 * POST /api/v1/uploads (scope cases:write): a fileKey under the caller's company prefix and a
 * presigned PUT to upload the invoice to. No storage I/O beyond authentication: presigning is local.
 */
export interface CreateUploadDeps {
  keys: ApiKeyStore;
  uploads: UploadService;
}

export function createUpload(uploads: UploadService): CoreHandler {
  return async (event, context) => {
    const parsed = parseUploadRequest(event.body as unknown);
    if (!parsed.ok) {
      context.logFields.invalidFieldCount = parsed.errors.length;
      throw new InvalidRequestError('The upload request is invalid; see "errors" for every field to fix.', parsed.errors);
    }
    const auth = authOf(context);
    const ticket = await uploads.issue(parsed.value, { companyId: auth.companyId, keyId: auth.keyId });
    Object.assign(context.logFields, { contentType: parsed.value.contentType, contentLength: parsed.value.contentLength, fileKey: ticket.fileKey });
    return jsonResponse(201, ticket);
  };
}

export function buildCreateUploadHandler(deps: CreateUploadDeps) {
  return apiHandler({ scope: 'cases:write', keys: deps.keys, jsonBody: true }, createUpload(deps.uploads));
}

export const handler = buildCreateUploadHandler({ keys: defaultTableStores().keys, uploads: defaultUploadService() });
