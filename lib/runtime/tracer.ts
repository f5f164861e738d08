import { Tracer } from '@aws-lambda-powertools/tracer';

/**
 * One X-Ray tracer per process. The storage clients are wrapped with it
 * (`captureAWSv3Client`), so every DynamoDB and S3 call is a subsegment of the invocation, and
 * the shared middy chain opens the handler's segment (`lib/http/trace-request.ts`).
 *
 * It switches itself off outside Lambda (no `AWS_EXECUTION_ENV`), and with
 * `POWERTOOLS_TRACE_ENABLED=false` (set by the local stack and the tests): disabled, it leaves the
 * clients untouched and records nothing, so nothing local needs an X-Ray daemon.
 */
export const tracer = new Tracer({
  serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'partner-case-api',
});
