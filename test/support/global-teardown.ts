interface Stoppable {
  stop(): Promise<void>;
}

export default async function globalTeardown(): Promise<void> {
  const shared = globalThis as { __LOCAL_STORES__?: Stoppable; __LOCAL_STORES_USERS__?: number };
  const stores = shared.__LOCAL_STORES__;
  if (!stores) return;
  shared.__LOCAL_STORES_USERS__ = (shared.__LOCAL_STORES_USERS__ ?? 1) - 1;
  if (shared.__LOCAL_STORES_USERS__ > 0) return;
  delete shared.__LOCAL_STORES__;
  await stores.stop();
}
