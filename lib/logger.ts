import { Logger } from '@aws-lambda-powertools/logger';

/**
 * One structured JSON logger per process. Request id, company id and key id are appended per
 * request by the middleware; the API key itself, the Authorization header and request bodies are
 * never logged (the event is not logged at all).
 */
export const logger = new Logger({
  serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'partner-case-api',
  logLevel: (process.env.POWERTOOLS_LOG_LEVEL ?? process.env.LOG_LEVEL ?? 'INFO') as 'INFO',
});
