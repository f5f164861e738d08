import type { AppConfig } from '../../lib/runtime/config.js';

/**
 * What the floor handlers read from the environment: the same variables as lib/runtime/config.ts, read
 * without validation (the floor carries only SDK code, not the project's zod schema).
 */
export function floorConfig(): AppConfig {
  const env = process.env;
  return {
    tableName: env.TABLE_NAME ?? '',
    bucketName: env.BUCKET_NAME ?? '',
    region: env.AWS_REGION ?? 'eu-west-2',
    dynamoEndpoint: env.DYNAMODB_ENDPOINT,
    s3Endpoint: env.S3_ENDPOINT,
    idempotencyTtlSeconds: 86_400,
    uploadUrlTtlSeconds: 900,
    claimHorizonSeconds: 20,
    cursorSecret: env.CURSOR_SECRET,
    cursorSecretArn: env.CURSOR_SECRET_ARN,
    webhookSecretKey: env.WEBHOOK_SECRET_KEY,
    webhookSecretKeyArn: env.WEBHOOK_SECRET_KEY_ARN,
    webhookAllowLocalUrls: env.WEBHOOK_ALLOW_LOCAL_URLS === 'true',
    local: Boolean(env.DYNAMODB_ENDPOINT),
  };
}

/** The key id inside `Authorization: Bearer pca_<keyId>_...` (no checksum or hash check). */
export function keyIdOf(headers: Record<string, string | undefined> | null): string {
  const value = headers?.Authorization ?? headers?.authorization ?? '';
  return value.replace(/^Bearer\s+pca_/i, '').slice(0, 16);
}

export interface FloorEvent {
  headers: Record<string, string | undefined> | null;
  pathParameters?: Record<string, string | undefined> | null;
  body?: string | null;
}

export interface FloorResult {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}
