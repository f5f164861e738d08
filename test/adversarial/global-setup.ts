import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import integrationSetup from '../support/global-setup.ts';

export default async function globalSetup(): Promise<void> {
  process.env.ADVERSARIAL_SUMMARY_DIR = mkdtempSync(join(tmpdir(), 'pca-adversarial-'));
  await integrationSetup();
}
