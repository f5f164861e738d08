import { randomUUID } from 'node:crypto';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { createDocumentClient } from '../../lib/adapters/dynamodb/dynamo-client.js';
import { createS3Client } from '../../lib/adapters/s3/s3-client.js';
import { floorConfig, keyIdOf, type FloorEvent, type FloorResult } from './env.js';

/**
 * Cold-start floor for POST /api/v1/uploads: the same DocumentClient and S3Client (production
 * factories), built at load; the API key read, then one presigned PUT. No validation, middy, zod,
 * logger or metrics.
 */
const cfg = floorConfig();
const ddb = createDocumentClient(cfg);
const s3 = createS3Client(cfg);

export const handler = async (event: FloorEvent): Promise<FloorResult> => {
  const request = JSON.parse(event.body ?? '{}') as { contentType: string; contentLength: number };
  const key = await ddb.send(
    new GetCommand({ TableName: cfg.tableName, Key: { pk: `KEY#${keyIdOf(event.headers)}`, sk: 'KEY' }, ConsistentRead: true }),
  );
  const fileKey = `invoices/${String(key.Item?.companyId)}/${randomUUID().replace(/-/g, '')}.pdf`;
  const uploadUrl = await getSignedUrl(
    s3,
    new PutObjectCommand({ Bucket: cfg.bucketName, Key: fileKey, ContentType: request.contentType, ContentLength: request.contentLength }),
    { expiresIn: cfg.uploadUrlTtlSeconds, signableHeaders: new Set(['content-type', 'content-length']) },
  );
  return { statusCode: 201, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ fileKey, uploadUrl, method: 'PUT' }) };
};
