/**
 * The duplicate guard compares invoiceRefs trimmed, Unicode NFC-normalised and case-folded, so
 * `INV-1` and ` inv-1` are one invoice. (toLowerCase after toUpperCase folds the special cases
 * such as the German sharp s and the Greek final sigma the same way for both spellings.)
 */
export function invoiceRefKey(invoiceRef: string): string {
  return invoiceRef.trim().normalize('NFC').toUpperCase().toLowerCase().normalize('NFC');
}
