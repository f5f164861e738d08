import { Logger } from '@aws-lambda-powertools/logger';
import type { LogAttributes } from '@aws-lambda-powertools/logger/types';
import type { Log } from '../log.js';

/**
 * One structured JSON logger per process. Request id, company id and key id are appended per
 * request by the middleware; the API key itself, the Authorization header and request bodies are
 * never logged (the event is not logged at all).
 */
export const logger = new Logger({
  serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'partner-case-api',
  logLevel: (process.env.POWERTOOLS_LOG_LEVEL ?? process.env.LOG_LEVEL ?? 'INFO') as 'INFO',
});

/** The domain's `Log` port over this logger (structured fields become log attributes). */
export const operationalLog: Log = {
  warn: (message, fields = {}) => logger.warn(message, fields as LogAttributes),
  error: (message, fields = {}) => logger.error(message, fields as LogAttributes),
};
