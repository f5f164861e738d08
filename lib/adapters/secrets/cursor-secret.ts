import { CursorSealer } from '../../cases/list-cursor.js';
import type { Deadline } from '../../deadline.js';
import type { AppConfig } from '../../runtime/config.js';
import { builtOnce, keyMaterial } from './read-secret-string.js';

/**
 * The list cursors' sealer, its key material `CURSOR_SECRET` when set (locally), else the Secrets
 * Manager secret named by `CURSOR_SECRET_ARN` (the stack): built on first use and kept for the
 * process (builtOnce: a failure is not kept). The value never reaches a log or a response.
 */
export function cursorSealerOnce(
  cfg: Pick<AppConfig, 'region' | 'cursorSecret' | 'cursorSecretArn'>,
): (deadline?: Deadline) => Promise<CursorSealer> {
  const source = { region: cfg.region, value: cfg.cursorSecret, arn: cfg.cursorSecretArn };
  const names = { required: 'CURSOR_SECRET or CURSOR_SECRET_ARN is required by the case list', what: 'the cursor secret' };
  return builtOnce(async (deadline) => new CursorSealer(await keyMaterial(source, names, deadline)));
}
