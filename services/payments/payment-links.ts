import type { PaymentLink } from '../../contracts/payment-links.ts';
import { randomBytesPooled } from '../shared/crypto.ts';
import type { Queryable } from '../shared/db.ts';
import { DomainError, notFound } from '../shared/errors.ts';
import { findInvoiceRow } from '../invoices/invoice-queries.ts';
import { PAYMENT_DOMAIN_LIFECYCLE, VERIFIED_DOMAIN } from '../domains/payment-domain-lifecycle.ts';
import { isIssued } from '../invoices/invoice-lifecycle.ts';
import { DEFAULT_PAY_PORT } from '../shared/config.ts';

/**
 * Payment links (docs/api-conventions.md, "Payment links, pay page and receipts"): one per issued invoice, created on
 * the first request and the same ever after. The reference (128 random bits) is the link's path and cannot be guessed;
 * the payment code (40 random bits) is short enough to type from a paper invoice, so the pay page rate-limits code
 * look-ups (services/pay).
 */

/** Crockford base32: no I, L, O or U, so nothing a person reads off paper is ambiguous. */
export const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const CODE_RE = /^[0-9A-HJKMNP-TV-Z]{8}$/;
const REFERENCE_RE = /^[0-9a-f]{32}$/;

/** 8 characters of 5 random bits each: exactly the 40 bits of 5 random bytes, so every code is equally likely. */
export function newPaymentCode(): string {
  let bits = 0n;
  for (const b of randomBytesPooled(5)) bits = (bits << 8n) | BigInt(b);
  let code = '';
  for (let i = 7; i >= 0; i--) code += CROCKFORD[Number((bits >> BigInt(i * 5)) & 31n)];
  return code;
}

export const newReference = (): string => randomBytesPooled(16).toString('hex');

/** XXXX-XXXX, as the code is shown to people. */
export const formatPaymentCode = (code: string): string => `${code.slice(0, 4)}-${code.slice(4)}`;

/**
 * A code as typed: any case, with or without the hyphen and spaces; O is read as 0 and I or L as 1 (Crockford's
 * decoding rules). Undefined when it cannot be a code at all (then no look-up is made).
 */
export function normalizePaymentCode(input: string): string | undefined {
  const code = input.replace(/[\s-]/g, '').toUpperCase().replace(/O/g, '0').replace(/[IL]/g, '1');
  return CODE_RE.test(code) ? code : undefined;
}

export const isReference = (s: string): boolean => REFERENCE_RE.test(s);

interface LinkRow {
  invoice_id: string;
  organization_id: string;
  reference: string;
  payment_code: string;
  created_at: Date;
}

/**
 * A link's address: on the organisation's verified payment domain `https://<domain>/<reference>` (the pay service
 * answers that path for the domain's Host, services/pay/plugins/payment-domain-host.ts), else the pay service's own
 * `<pay base URL>/p/<reference>`. Only a verified domain counts: one that is set but unverified or failed changes
 * nothing, so a link never points at a name that does not lead to the pay page.
 */
export function paymentLinkUrl(reference: string, payBaseUrl: string, verifiedDomain: string | null): string {
  return verifiedDomain ? `https://${verifiedDomain}/${reference}` : `${payBaseUrl.replace(/\/+$/, '')}/p/${reference}`;
}

/** The organisation's verified payment domain, or null (migration 024, payment_domains). */
export async function findVerifiedPaymentDomain(sql: Queryable, organizationId: string): Promise<string | null> {
  const [row] = await sql<{ domain: string }[]>`
    SELECT domain FROM payment_domains
    WHERE organization_id = ${organizationId} AND status IN ${PAYMENT_DOMAIN_LIFECYCLE.in(sql, [VERIFIED_DOMAIN])}`;
  return row?.domain ?? null;
}

const LINK_COLUMNS = ['invoice_id', 'organization_id', 'reference', 'payment_code', 'created_at'] as const;

export function toPaymentLink(row: LinkRow, payBaseUrl: string, verifiedDomain: string | null): PaymentLink {
  return {
    invoiceId: row.invoice_id,
    url: paymentLinkUrl(row.reference, payBaseUrl, verifiedDomain),
    reference: row.reference,
    paymentCode: formatPaymentCode(row.payment_code),
    createdAt: row.created_at.toISOString(),
  };
}

/**
 * The invoice's link, created if it has none yet. GET and POST both answer with it: the link is a stable property
 * of an issued invoice, so creating it on the first read changes nothing a caller can observe.
 */
export async function getOrCreatePaymentLink(sql: Queryable, organizationId: string, invoiceId: string, payBaseUrl: string): Promise<PaymentLink> {
  const invoice = await findInvoiceRow(sql, organizationId, invoiceId);
  if (!invoice) throw notFound('invoice_not_found', 'invoice');
  if (invoice.type === 'creditNote') throw new DomainError('credit_note_not_payable', 'A credit note is not payable and has no payment link.');
  if (!isIssued(invoice.status)) {
    throw new DomainError('invoice_not_issued', 'A draft has no payment link; issue the invoice first.');
  }
  const domain = await findVerifiedPaymentDomain(sql, organizationId);
  return toPaymentLink(await createPaymentLinkRow(sql, organizationId, invoice.id), payBaseUrl, domain);
}

/**
 * The invoice's link row, made if it has none yet. The caller has checked that the invoice is payable: issued, or
 * issuing (its PDF prints the link: finish-issue.ts); the pay page shows no invoice that is not issued yet.
 */
export async function createPaymentLinkRow(sql: Queryable, organizationId: string, invoiceId: string): Promise<LinkRow> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const [existing] = await sql<LinkRow[]>`
      SELECT ${sql(LINK_COLUMNS)} FROM payment_links
      WHERE organization_id = ${organizationId} AND invoice_id = ${invoiceId}`;
    if (existing) return existing;
    // No conflict target: a concurrent first request for this invoice wins (we then read its link), and so does a
    // code already taken by another invoice (we then draw again).
    const [created] = await sql<LinkRow[]>`
      INSERT INTO payment_links (invoice_id, organization_id, reference, payment_code)
      VALUES (${invoiceId}, ${organizationId}, ${newReference()}, ${newPaymentCode()})
      ON CONFLICT DO NOTHING
      RETURNING ${sql(LINK_COLUMNS)}`;
    if (created) return created;
  }
  throw new Error(`could not create a payment link for invoice ${invoiceId} in 5 attempts`);
}

/**
 * The link as a document prints it (the invoice's PDF and mail): its URL as GET …/payment-link answers it now (on the
 * verified payment domain when there is one) and its code. Null when the invoice has no link. Reads only.
 */
export async function printedPaymentLink(
  sql: Queryable,
  organizationId: string,
  invoiceId: string,
  payBaseUrl: string | undefined,
): Promise<{ url: string; paymentCode: string } | null> {
  const [row] = await sql<LinkRow[]>`
    SELECT ${sql(LINK_COLUMNS)} FROM payment_links WHERE organization_id = ${organizationId} AND invoice_id = ${invoiceId}`;
  if (!row) return null;
  // Without PAY_BASE_URL, the pay service's default address, as the API's payment-link routes answer.
  const base = payBaseUrl ?? `http://127.0.0.1:${DEFAULT_PAY_PORT}`;
  const { url, paymentCode } = toPaymentLink(row, base, await findVerifiedPaymentDomain(sql, organizationId));
  return { url, paymentCode };
}

/** The invoice a link reference or payment code belongs to, across organisations (the pay page has no key). */
export async function findPaymentLink(
  sql: Queryable,
  by: { reference: string } | { code: string },
): Promise<{ organizationId: string; invoiceId: string; reference: string; paymentCode: string } | undefined> {
  const [row] =
    'reference' in by
      ? isReference(by.reference)
        ? await sql<LinkRow[]>`SELECT ${sql(LINK_COLUMNS)} FROM payment_links WHERE reference = ${by.reference}`
        : []
      : await sql<LinkRow[]>`SELECT ${sql(LINK_COLUMNS)} FROM payment_links WHERE payment_code = ${by.code}`;
  return row ? { organizationId: row.organization_id, invoiceId: row.invoice_id, reference: row.reference, paymentCode: formatPaymentCode(row.payment_code) } : undefined;
}
