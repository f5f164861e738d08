/**
 * `fn` over every one of `items`, at most `limit` calls running at once, the results in the items'
 * order. For work that shares one resource with other tenants (the table): a burst's requests wait
 * their turn in the caller, not all at once in the store's own queue, where another company's
 * request would wait behind every one of them. An item that fails does not stop the others; once
 * all are done, the failure that happened first is thrown. `limit` is a whole number of at least 1
 * (Infinity: all at once).
 */
export async function mapAtMost<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  if (!(limit >= 1) || (Number.isFinite(limit) && !Number.isInteger(limit))) {
    throw new RangeError(`mapAtMost: limit must be a whole number of at least 1, not ${limit}`);
  }
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  let failed: { error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      try {
        results[index] = await fn(items[index]!, index);
      } catch (error) {
        failed ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failed !== undefined) throw failed.error;
  return results;
}
