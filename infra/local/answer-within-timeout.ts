import { waitAtMost } from '../../lib/wait-at-most.js';

/**
 * A local event source mapping's invocation as Lambda ends it: the handler's answer, or a rejection
 * once the function's timeout (`timeoutMs`; none when undefined) has passed without one, so the
 * mapping takes the batch as failed whole. The handler runs on, only no longer waited for: one
 * Node.js process cannot stop it, and its late answer is never read. Both local mappings use it
 * (queue-poller.ts, stream-poller.ts).
 */
export async function answerWithinTimeout<T>(invocation: Promise<T>, timeoutMs: number | undefined): Promise<T> {
  if (!(await waitAtMost(invocation, timeoutMs))) throw new Error(`the invocation timed out after ${timeoutMs} ms`);
  return invocation;
}
