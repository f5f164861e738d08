import { tableAdapters, uploadService } from '../lib/adapters/production-adapters.js';
import type { ApiKeyStore } from '../lib/auth/ports.js';
import { apiHandler, jsonResponse, type CoreHandler } from '../lib/http/api-handler.js';
import { callerOf } from '../lib/http/types.js';
import { validRequestBody } from '../lib/http/valid-request-body.js';
import type { UploadService } from '../lib/uploads/upload-service.js';
import { parseUploadRequest } from '../lib/uploads/upload-request.js';

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
    const request = validRequestBody(parseUploadRequest(event.body as unknown), context, 'upload request');
    const caller = callerOf(context);
    const ticket = await uploads.issue(request, { companyId: caller.companyId, keyId: caller.keyId, mode: caller.mode });
    Object.assign(context.logFields, {
      contentType: request.contentType,
      contentLength: request.contentLength,
      fileKey: ticket.fileKey,
    });
    return jsonResponse(201, ticket);
  };
}

export function buildCreateUploadHandler(deps: CreateUploadDeps) {
  return apiHandler({ scope: 'cases:write', keys: deps.keys, jsonBody: true }, createUpload(deps.uploads));
}

export const handler = buildCreateUploadHandler({ keys: tableAdapters().keys, uploads: uploadService() });
