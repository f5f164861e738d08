import type { Deadline } from '../deadline.js';
import { UnauthenticatedError } from '../errors.js';
import type { Log } from '../log.js';
import type { Mode } from '../mode.js';
import { parseApiKey, secretMatches, type ParsedApiKey } from './api-key.js';
import type { ApiKeyStore } from './ports.js';
import type { Scope } from './scopes.js';

/** Who is calling: established from the API key before any route's work is looked at. */
export interface Caller {
  companyId: string;
  keyId: string;
  scopes: readonly Scope[];
  /** The key's mode: everything the caller reads or writes stays in this mode's world. */
  mode: Mode;
}

/** Hash compared when no key record exists, so unknown and known keys cost the same work. */
const DUMMY_HASH = '0'.repeat(64);
export const KEY_USE_RECORD_INTERVAL_MS = 60_000;

export interface Authenticated {
  caller: Caller;
  /**
   * The once-a-minute `lastUsedAt` write, started off the critical path; settled (never rejects).
   * The caller awaits it before the response leaves, so the write is not frozen mid-flight.
   */
  keyUse: Promise<void>;
}

/**
 * Authentication rules (product rules "Authentication and keys"): a key that does not parse or
 * fails its checksum is refused with no storage read at all; otherwise one strongly consistent
 * read by key id, a constant-time comparison, and revocation honoured on the very next request.
 * Every refusal is the same UnauthenticatedError.
 */
export class KeyAuthenticator {
  constructor(
    private readonly keys: ApiKeyStore,
    private readonly log: Log,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Parses a presented key (no I/O); throws UnauthenticatedError when it is absent or malformed. */
  parse(presented: string | undefined): ParsedApiKey {
    const parsed = presented === undefined ? undefined : parseApiKey(presented);
    if (!parsed) throw new UnauthenticatedError();
    return parsed;
  }

  async authenticate(parsed: ParsedApiKey, deadline?: Deadline): Promise<Authenticated> {
    const record = await this.keys.get(parsed.keyId, deadline);
    const matches = secretMatches(parsed.secret, record?.secretHash ?? DUMMY_HASH);
    // A key whose prefix names another mode than its record is not a key we issued.
    if (!record || !matches || record.revoked || record.mode !== parsed.mode) throw new UnauthenticatedError();

    const caller: Caller = { companyId: record.companyId, keyId: record.keyId, scopes: record.scopes as Scope[], mode: record.mode };
    const at = this.now();
    const last = record.lastUsedAt ? Date.parse(record.lastUsedAt) : Number.NaN;
    if (at.getTime() - last < KEY_USE_RECORD_INTERVAL_MS) return { caller, keyUse: Promise.resolve() };
    const notAfter = new Date(at.getTime() - KEY_USE_RECORD_INTERVAL_MS).toISOString();
    const keyUse = this.keys.touch(record.keyId, at.toISOString(), notAfter, deadline).catch((error: unknown) => {
      this.log.warn('could not record API key use', { error: error as Error });
    });
    return { caller, keyUse };
  }
}
