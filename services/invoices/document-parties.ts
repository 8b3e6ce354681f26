import type { Address } from '../../contracts/customers.ts';
import type { Keyring } from '../shared/crypto.ts';
import type { Queryable } from '../shared/db.ts';
import type { InvoiceDocumentView } from './invoice-document.ts';

export type SellerSnapshot = InvoiceDocumentView['seller'] & { defaultPaymentTermsDays: number };
export type BuyerSnapshot = InvoiceDocumentView['buyer'] & { language: 'da' | 'en'; email: string | null };

/** The seller as printed: the organisation's name, address, CVR and bank details at the moment of issue. */
export async function loadSeller(sql: Queryable, organizationId: string): Promise<SellerSnapshot> {
  const [o] = await sql<{
    name: string; cvr: string | null; street: string | null; postal_code: string | null; city: string | null;
    email: string | null; bank_reg: string | null; bank_account: string | null; default_payment_terms_days: number;
  }[]>`
    SELECT name, cvr, street, postal_code, city, email, bank_reg, bank_account, default_payment_terms_days
    FROM organizations WHERE id = ${organizationId}`;
  return {
    name: o!.name,
    cvr: o!.cvr,
    street: o!.street,
    postalCode: o!.postal_code,
    city: o!.city,
    country: null,
    email: o!.email,
    bankReg: o!.bank_reg,
    bankAccount: o!.bank_account,
    defaultPaymentTermsDays: o!.default_payment_terms_days,
  };
}

/** The buyer as printed, plus what sending needs (language, e-mail). */
export async function loadBuyer(sql: Queryable, keyring: Keyring, organizationId: string, customerId: string): Promise<BuyerSnapshot> {
  const [c] = await sql<{
    name: string; cvr: string | null; address: Address | null; contact_person: string | null; language: 'da' | 'en' | null; email_enc: Buffer | null;
    ean: string | null; peppol_id: string | null; vat_number: string | null;
  }[]>`
    SELECT name, cvr, address, contact_person, language, email_enc, ean, peppol_id, vat_number FROM customers
    WHERE organization_id = ${organizationId} AND id = ${customerId}`;
  return {
    name: c!.name,
    cvr: c!.cvr,
    street: c!.address?.street ?? null,
    postalCode: c!.address?.postalCode ?? null,
    city: c!.address?.city ?? null,
    country: c!.address?.country ?? null,
    contactPerson: c!.contact_person,
    language: c!.language ?? 'da',
    email: c!.email_enc ? keyring.decrypt(c!.email_enc) : null,
    ean: c!.ean,
    peppolId: c!.peppol_id,
    vatNumber: c!.vat_number,
  };
}

/**
 * The snapshot stored on the invoice: everything printed, and the e-invoice address and VAT number the e-invoice is
 * addressed by (frozen like the name, so that an e-invoice made later says what the issue said); nothing that is
 * personal data beyond the document's own.
 */
export const printedBuyer = (b: BuyerSnapshot): InvoiceDocumentView['buyer'] => ({
  name: b.name, cvr: b.cvr, street: b.street, postalCode: b.postalCode, city: b.city, country: b.country, contactPerson: b.contactPerson,
  ean: b.ean ?? null, peppolId: b.peppolId ?? null, vatNumber: b.vatNumber ?? null,
});

export const printedSeller = (s: SellerSnapshot): InvoiceDocumentView['seller'] => ({
  name: s.name, cvr: s.cvr, street: s.street, postalCode: s.postalCode, city: s.city, country: s.country,
  email: s.email, bankReg: s.bankReg, bankAccount: s.bankAccount,
});
