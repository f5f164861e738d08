/**
 * Whether the debtorName a partner gave is the registered name of the company (product rules
 * "Case lifecycle"): compared after normalising case, punctuation, spacing, `&`/`AND`,
 * `LTD`/`LIMITED`, `PLC`/`PUBLIC LIMITED COMPANY` and a leading `THE`. Accents are dropped too
 * (`Café` = `CAFE`): the register spells names in capitals without them.
 */
const WORD_FORMS: Readonly<Record<string, string>> = {
  LTD: 'LIMITED',
  PLC: 'PUBLIC LIMITED COMPANY',
};

/** The comparable form of a company name: the words joined without spaces, so spacing never matters. */
export function normaliseCompanyName(name: string): string {
  const words = name
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toUpperCase()
    .replace(/&/g, ' AND ')
    // An apostrophe joins (O'BRIEN = OBRIEN); any other punctuation separates.
    .replace(/['’`]/g, '')
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);
  if (words[0] === 'THE' && words.length > 1) words.shift();
  return words
    .map((w) => WORD_FORMS[w] ?? w)
    .join(' ')
    .replace(/ /g, '');
}

export function isSameCompanyName(debtorName: string, registeredName: string): boolean {
  return normaliseCompanyName(debtorName) === normaliseCompanyName(registeredName);
}
