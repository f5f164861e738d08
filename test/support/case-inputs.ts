/** A valid case input (spec 2.1) citing the given fileKey; pure, so the fast tier can use it too. */
export function validCase(invoiceFileKey: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    debtorName: 'Acme Widgets Ltd',
    debtorEmail: 'accounts@acme.example',
    invoiceRef: `INV-${Math.random().toString(36).slice(2, 10)}`,
    invoiceDate: '2025-01-10',
    dueDate: '2025-02-10',
    principalAmount: 1250.5,
    invoiceFileKey,
    attestation: { b2b: true, under10k: true, within6years: true, undisputed: true, attestedBy: 'Jane Smith, Credit Controller' },
    ...overrides,
  };
}
