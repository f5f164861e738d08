/**
 * UK company numbers (Companies House): 8 characters, either 8 digits or a 2-character register
 * prefix + 6 digits. Shorter all-digit numbers are left-padded with zeros. The prefix says where
 * the company is registered; claims go to the small claims track of England & Wales, so Scottish
 * and Northern Irish registrations are out of jurisdiction.
 */
const NORMALISED = /^(?:[0-9]{8}|[A-Z]{2}[0-9]{6}|R0[0-9]{6})$/;
const OUTSIDE_ENGLAND_AND_WALES = ['SC', 'SO', 'SL', 'SF', 'SZ', 'SA', 'NI', 'NC', 'NF', 'NL', 'NZ', 'NA', 'R0'];

/**
 * What `normaliseCompanyNumber` accepts, as one pattern (for the API description): surrounding
 * white space, 1 to 8 digits, or 2 letters (either case, or `R0`) and 6 digits.
 */
export const COMPANY_NUMBER_INPUT_PATTERN = /^\s*(?:[0-9]{1,8}|[A-Za-z]{2}[0-9]{6}|[Rr]0[0-9]{6})\s*$/;

/** The normalised number (upper case, zero-padded), or undefined when it is not a UK company number. */
export function normaliseCompanyNumber(input: string): string | undefined {
  let value = input.trim().toUpperCase();
  if (/^[0-9]{1,7}$/.test(value)) value = value.padStart(8, '0');
  return NORMALISED.test(value) ? value : undefined;
}

export function isOutOfJurisdiction(normalised: string): boolean {
  return OUTSIDE_ENGLAND_AND_WALES.includes(normalised.slice(0, 2));
}
