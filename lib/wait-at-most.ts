/**
 * Waits for `work` for at most `ms` milliseconds (for as long as it takes when `ms` is undefined):
 * true when it settled in time, false when the time ran out first. A rejection of `work` in time is
 * passed on. The work itself is not stopped, only no longer waited for: the callers answer before a
 * timeout (the delivery function's batch, the redeliver route) or take an invocation as timed out
 * (the local event source mappings: infra/local/answer-within-timeout.ts).
 */
export async function waitAtMost(work: Promise<unknown>, ms: number | undefined): Promise<boolean> {
  if (ms === undefined) {
    await work;
    return true;
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeUp = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), Math.max(0, ms));
  });
  try {
    return await Promise.race([work.then(() => true as const), timeUp]);
  } finally {
    clearTimeout(timer);
  }
}
