import { rmSync } from 'node:fs';

interface Stoppable {
  stop(): Promise<void>;
}

export default async function globalTeardown(): Promise<void> {
  const shared = globalThis as { __LOCAL_STORES__?: { dynamo: Stoppable; s3: Stoppable; s3Dir?: string }; __LOCAL_STORES_USERS__?: number };
  const stores = shared.__LOCAL_STORES__;
  if (!stores) return;
  shared.__LOCAL_STORES_USERS__ = (shared.__LOCAL_STORES_USERS__ ?? 1) - 1;
  if (shared.__LOCAL_STORES_USERS__ > 0) return;
  delete shared.__LOCAL_STORES__;
  await Promise.all([stores.dynamo.stop(), stores.s3.stop()]);
  if (stores.s3Dir) rmSync(stores.s3Dir, { recursive: true, force: true });
}
