import { route } from './route-entry.js';

/** `/api/v1/uploads`: presigned invoice uploads. */
export const UPLOAD_ROUTES = {
  createUpload: route({
    name: 'create-upload',
    constructId: 'CreateUpload',
    method: 'POST',
    resource: '/api/v1/uploads',
    operationName: 'CreateUpload',
    summary: 'Request an invoice upload',
    scope: 'cases:write',
    grants: { table: 'authenticate', invoiceBucket: 'issue-uploads' },
    load: () => import('../../../functions/create-upload.js'),
  }),
};
