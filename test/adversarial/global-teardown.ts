import { rmSync } from 'node:fs';
import integrationTeardown from '../support/global-teardown.ts';

export default async function globalTeardown(): Promise<void> {
  // The summary reporter has printed the counts by now (reporters finish before global teardown).
  const dir = process.env.ADVERSARIAL_SUMMARY_DIR;
  if (dir) rmSync(dir, { recursive: true, force: true });
  await integrationTeardown();
}
