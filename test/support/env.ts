import { randomBytes } from 'node:crypto';

// Loaded in every test worker before any module: quiet logs and a fixed SDK environment.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
process.env.POWERTOOLS_LOG_LEVEL ??= 'SILENT';
process.env.POWERTOOLS_DEV ??= 'true';
// No test needs X-Ray: the tracer records nothing and leaves the storage clients as they are.
process.env.POWERTOOLS_TRACE_ENABLED ??= 'false';
// Nor its context tracking, which in automatic mode hooks every promise (docs/local-development.md).
process.env.AWS_XRAY_MANUAL_MODE ??= 'true';
// Unit tests never reach storage; these keep config() satisfied when a module reads it.
process.env.TABLE_NAME ??= 'unit-test-table';
process.env.BUCKET_NAME ??= 'unit-test-bucket';
process.env.AWS_REGION ??= 'eu-west-2';
process.env.AWS_ACCESS_KEY_ID ??= 'local';
process.env.AWS_SECRET_ACCESS_KEY ??= 'local';
// The list cursors' key, generated per worker like `npm start` does (never a fixed value in the repo).
process.env.CURSOR_SECRET ??= randomBytes(32).toString('base64url');
// The key that seals webhook endpoint secrets, likewise generated per worker.
process.env.WEBHOOK_SECRET_KEY ??= randomBytes(32).toString('base64url');
