/**
 * The seller's details printed on documents; set by the operator command's `create-org` and `update-org`
 * (services/admin).
 */
export interface SellerDetails {
  street?: string;
  postalCode?: string;
  city?: string;
  email?: string;
  bankReg?: string;
  bankAccount?: string;
  /** The FI creditor number (8 digits, the first an 8): invoices issued while it is set carry an FI-kort +71 payment id. */
  fiCreditorNumber?: string;
}

export const SELLER_COLUMNS: Record<keyof SellerDetails, string> = {
  street: 'street',
  postalCode: 'postal_code',
  city: 'city',
  email: 'email',
  bankReg: 'bank_reg',
  bankAccount: 'bank_account',
  fiCreditorNumber: 'fi_creditor_number',
};

export function sellerColumns(d: SellerDetails): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [field, column] of Object.entries(SELLER_COLUMNS)) {
    const v = d[field as keyof SellerDetails];
    if (v !== undefined) out[column] = v;
  }
  return out;
}
