import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import * as z from 'zod';
import type { VerificationAttempt, VerificationRetries } from '../../cases/verification/ports.js';
import { MODES } from '../../mode.js';
import type { AppConfig } from '../../runtime/config.js';
import { createHttpHandler, LOCAL_CREDENTIALS } from '../dynamodb/dynamo-client.js';
import { withRetries } from '../retry.js';

/**
 * The verification retry queue (SQS; locally fauxqs): a message per case waiting for its next
 * attempt, `{ caseId, mode, firstAttemptAt, failures, notBefore }`, delivered back to the worker
 * (functions/verify-debtors.ts) after `DelaySeconds`. SQS delays a message by at most 15 minutes
 * while the schedule's waits grow to an hour, so the message also carries `notBefore`: a message
 * that arrives early is sent again with the remaining delay (re-delays itself) instead of being
 * attempted. The attempt fields are VerificationAttempt's; `notBefore` is this transport's.
 */
export const MAX_SQS_DELAY_SECONDS = 15 * 60;

export const retryMessageSchema = z.object({
  caseId: z.string().min(1),
  mode: z.enum(MODES),
  firstAttemptAt: z.iso.datetime({ offset: true }),
  failures: z.number().int().min(0),
  notBefore: z.iso.datetime({ offset: true }),
});
export type RetryMessage = z.infer<typeof retryMessageSchema>;

/** Seconds SQS should hold a message meant for `at` (rounded up, 0 to 15 minutes). */
export function delaySecondsUntil(at: Date, now: Date): number {
  return Math.min(MAX_SQS_DELAY_SECONDS, Math.max(0, Math.ceil((at.getTime() - now.getTime()) / 1000)));
}

export class SqsVerificationRetries implements VerificationRetries {
  constructor(
    private readonly client: SQSClient,
    private readonly queueUrl: string,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async schedule(attempt: VerificationAttempt, at: Date): Promise<void> {
    const message: RetryMessage = { ...attempt, notBefore: at.toISOString() };
    const command = new SendMessageCommand({
      QueueUrl: this.queueUrl,
      MessageBody: JSON.stringify(message),
      DelaySeconds: delaySecondsUntil(at, this.now()),
    });
    // Resending after a lost answer may queue the attempt twice: the worker is idempotent.
    await withRetries((options) => this.client.send(command, options));
  }
}

export function sqsClient(cfg: Pick<AppConfig, 'region' | 'sqsEndpoint'>): SQSClient {
  return new SQSClient({
    region: cfg.region,
    requestHandler: createHttpHandler(),
    // The retry layer (lib/adapters/retry.ts) retries; the SDK's own would multiply with it.
    maxAttempts: 1,
    ...(cfg.sqsEndpoint ? { endpoint: cfg.sqsEndpoint, credentials: LOCAL_CREDENTIALS } : {}),
  });
}
