interface Stoppable {
  stop(): Promise<void>;
}

export default async function globalTeardown(): Promise<void> {
  const stores = (globalThis as { __LOCAL_STORES__?: { dynamo: Stoppable; s3: Stoppable } }).__LOCAL_STORES__;
  if (!stores) return;
  await Promise.all([stores.dynamo.stop(), stores.s3.stop()]);
}
