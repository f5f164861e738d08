/**
 * Live or test (product rules "Test mode (sandbox)"): fixed on an API key when it is created and
 * carried by everything the key makes. Test mode is a separate world inside the same company:
 * storage keys of one mode never meet the other's.
 */
export const MODES = ['live', 'test'] as const;
export type Mode = (typeof MODES)[number];

export function isMode(value: unknown): value is Mode {
  return (MODES as readonly unknown[]).includes(value);
}

/** The mode of a stored record: records written before test mode existed are live. */
export function storedMode(value: unknown): Mode {
  return value === 'test' ? 'test' : 'live';
}

/** Test mode only: an invoiceRef starting with this is rejected TEMPORARY_FAILURE, so partners can rehearse resubmission. */
export const SIMULATE_TEMPORARY_FAILURE_PREFIX = 'SIMULATE-TEMPORARY-FAILURE';
