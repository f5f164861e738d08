/**
 * What a handler's partial batch response (`batchItemFailures`) fails, as an event source mapping reads
 * it: the ids it names, or the whole batch. Lambda treats a batch as a complete failure when an
 * itemIdentifier is an empty string, null, or under the wrong key (Lambda developer guide,
 * "Configuring partial batch response" for DynamoDB Streams and for SQS); one that names no record of
 * the batch is taken the same way here, so a handler's mistake shows locally as its batch retried,
 * never as records passed over. Used by both local pollers (stream-poller.ts, queue-poller.ts).
 */
export function reportedFailures(
  batchItemFailures: readonly { itemIdentifier?: unknown }[] | null | undefined,
  ids: readonly (string | undefined)[],
): Set<string> | 'whole-batch' {
  const known = new Set(ids.filter((id): id is string => typeof id === 'string' && id !== ''));
  const failed = new Set<string>();
  for (const failure of batchItemFailures ?? []) {
    const id = failure?.itemIdentifier;
    if (typeof id !== 'string' || !known.has(id)) return 'whole-batch';
    failed.add(id);
  }
  return failed;
}
