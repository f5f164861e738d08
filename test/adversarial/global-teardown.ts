import integrationTeardown from '../support/global-teardown.ts';
import { printSummary } from './summary.ts';

export default async function globalTeardown(): Promise<void> {
  const dir = process.env.ADVERSARIAL_SUMMARY_DIR;
  if (dir) printSummary(dir);
  await integrationTeardown();
}
