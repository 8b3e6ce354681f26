import type { Customer, Address } from '../../contracts/customers.ts';
import type { Keyring } from '../shared/crypto.ts';

/** The columns every customer read selects, and how a row becomes the API shape (decrypting e-mail and phone). */
export interface CustomerRow {
  id: string;
  type: 'person' | 'company';
  name: string;
  cvr: string | null;
  address: Address | null;
  email_enc: Buffer | null;
  phone_enc: Buffer | null;
  has_cpr: boolean;
  contact_person: string | null;
  language: 'da' | 'en' | null;
  external_reference: string | null;
  metadata: Record<string, string> | null;
  ean: string | null;
  peppol_id: string | null;
  vat_number: string | null;
  created_at: Date;
  updated_at: Date;
}

export const CUSTOMER_COLUMNS = [
  'id', 'type', 'name', 'cvr', 'address', 'email_enc', 'phone_enc', 'contact_person', 'language',
  'external_reference', 'metadata', 'ean', 'peppol_id', 'vat_number', 'created_at', 'updated_at',
] as const;

export function toCustomer(keyring: Keyring, r: CustomerRow): Customer {
  return customerOf(r, r.email_enc ? keyring.decrypt(r.email_enc) : null, r.phone_enc ? keyring.decrypt(r.phone_enc) : null);
}

/**
 * A page of rows in the API shape: every row's e-mail and phone decrypted in one batch, and each address with its
 * fields in the schema's order (street, postalCode, city, country) rather than JSONB's, so that the page can be written
 * with JSON.stringify (services/api/routes/v1/customer-page-json.ts).
 */
export function toCustomers(keyring: Keyring, rows: readonly CustomerRow[]): Customer[] {
  const blobs: (Buffer | null)[] = new Array<Buffer | null>(rows.length * 2);
  for (let i = 0; i < rows.length; i++) {
    blobs[2 * i] = rows[i]!.email_enc;
    blobs[2 * i + 1] = rows[i]!.phone_enc;
  }
  const plain = keyring.decryptMany(blobs);
  return rows.map((r, i) => {
    const c = customerOf(r, plain[2 * i] ?? null, plain[2 * i + 1] ?? null);
    c.address = addressInSchemaOrder(c.address);
    return c;
  });
}

/** The address with its fields in the schema's order; one with any other field is left as it is. */
function addressInSchemaOrder(a: Address | null): Address | null {
  if (a === null || typeof a !== 'object' || Array.isArray(a)) return a;
  for (const k in a) if (k !== 'street' && k !== 'postalCode' && k !== 'city' && k !== 'country') return a;
  const out: Address = {};
  if (a.street !== undefined) out.street = a.street;
  if (a.postalCode !== undefined) out.postalCode = a.postalCode;
  if (a.city !== undefined) out.city = a.city;
  if (a.country !== undefined) out.country = a.country;
  return out;
}

/** The API shape of a row whose e-mail and phone are already in clear text (read and decrypted, or just written). */
export function customerOf(
  r: Omit<CustomerRow, 'email_enc' | 'phone_enc'>,
  email: string | null,
  phone: string | null,
): Customer {
  return {
    id: r.id,
    type: r.type,
    name: r.name,
    cvr: r.cvr,
    address: r.address,
    email,
    phone,
    contactPerson: r.contact_person,
    language: r.language,
    externalReference: r.external_reference,
    metadata: r.metadata,
    ean: r.ean,
    peppolId: r.peppol_id,
    vatNumber: r.vat_number,
    hasCpr: r.has_cpr,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  };
}

/** Encrypted columns for e-mail and phone, plus the blind index that makes `?email=` an exact-match lookup. */
export function personalColumns(keyring: Keyring, input: { email?: string | null; phone?: string | null }) {
  const out: { email_enc?: Buffer | null; email_bidx?: Buffer | null; phone_enc?: Buffer | null } = {};
  if (input.email !== undefined) {
    out.email_enc = input.email === null ? null : keyring.encrypt(input.email);
    out.email_bidx = input.email === null ? null : emailIndex(keyring, input.email);
  }
  if (input.phone !== undefined) out.phone_enc = input.phone === null ? null : keyring.encrypt(input.phone);
  return out;
}

export const emailIndex = (keyring: Keyring, email: string): Buffer => keyring.blindIndex('customer-email', email);
