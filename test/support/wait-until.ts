/**
 * Polls `probe` every 25 ms until it holds or `ms` milliseconds have passed: true when it held. For
 * tests of the local event source mappings, whose pollers deliver on their own schedule.
 */
export async function waitUntil(probe: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (!probe()) {
    if (Date.now() > end) return false;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return true;
}
