import type { Db, Queryable } from '../shared/db.ts';
import { isUuid, uuidv7 } from '../shared/ids.ts';
import { findInvoiceRow, toInvoice } from '../invoices/invoice-queries.ts';
import { isIssued } from '../invoices/invoice-lifecycle.ts';
import { CHECKOUT_LIFECYCLE, OPEN_CHECKOUT_STATUS, type CheckoutSessionStatus } from './checkout-lifecycle.ts';
import { findPaymentLink } from './payment-links.ts';
import type { PaymentMethod, PaymentProvider } from './providers/provider.ts';

/** What the pay page shows about an invoice: the creditor, the invoice and its balance as of this read. */
export interface PayView {
  reference: string;
  paymentCode: string;
  organizationId: string;
  invoiceId: string;
  creditorName: string;
  invoiceNumber: number;
  dueDate: string | null;
  grossOere: number;
  /** Computed on this read, never stored: gross + fees − paid − credited. */
  balanceOere: number;
  /** The customer's document language, the page's default when the browser states no preference we have. */
  customerLanguage: 'da' | 'en';
  /** SHA-256 (hex) of the organisation's light logo now, shown on the page; null without one. */
  logoSha256: string | null;
}

/** The invoice behind a link, read fresh: never a cached balance. Undefined for unknown links (and, defensively, drafts). */
export async function loadPayView(sql: Queryable, by: { reference: string } | { code: string }): Promise<PayView | undefined> {
  const link = await findPaymentLink(sql, by);
  if (!link) return undefined;
  const row = await findInvoiceRow(sql, link.organizationId, link.invoiceId, { type: 'invoice' });
  if (!row || !isIssued(row.status) || row.number === null) return undefined;
  const [who] = await sql<{ name: string; language: 'da' | 'en' | null; logo: string | null }[]>`
    SELECT o.name, c.language, (SELECT sha256 FROM branding_logos WHERE organization_id = o.id AND variant = 'light') AS logo
    FROM organizations o
    JOIN customers c ON c.organization_id = o.id AND c.id = ${row.customer_id}
    WHERE o.id = ${link.organizationId}`;
  const invoice = toInvoice(row);
  return {
    reference: link.reference,
    paymentCode: link.paymentCode,
    organizationId: link.organizationId,
    invoiceId: link.invoiceId,
    creditorName: who!.name,
    invoiceNumber: row.number,
    dueDate: invoice.dueDate,
    grossOere: invoice.grossOere,
    balanceOere: invoice.balanceOere,
    customerLanguage: who!.language ?? 'da',
    logoSha256: who!.logo,
  };
}

export type CheckoutStart =
  | { kind: 'redirect'; url: string; sessionId: string; amountOere: number }
  | { kind: 'nothing_to_pay'; view: PayView }
  | { kind: 'unknown_link' };

/** An open checkout this young, for the same amount and method, is reused rather than opened again. */
const REUSE_WITHIN_MS = 20 * 60 * 1000;

export interface CheckoutDeps {
  db: Db;
  provider: PaymentProvider;
  /** The pay service's public base URL: return and callback addresses are built on it. */
  payBaseUrl: string;
}

/**
 * The customer chose to pay: opens a checkout with the provider for the invoice's balance at this moment
 * (docs/api-conventions.md, "Payment links, pay page and receipts", Paying).
 *
 * The checkout row is committed before the provider is called, so every callback finds it. A second click, another
 * tab or a reload within a few minutes, with the balance, method and language unchanged, gets the same provider
 * checkout again instead of a second one, so one customer is not led into paying twice. The provider is called outside any transaction.
 */
export async function startCheckout(deps: CheckoutDeps, reference: string, method: PaymentMethod, language: 'da' | 'en'): Promise<CheckoutStart> {
  const base = deps.payBaseUrl.replace(/\/+$/, '');
  const opened = await deps.db.tx(async (tx) => {
    const view = await loadPayView(tx, { reference });
    if (!view) return { kind: 'unknown_link' as const };
    // Serialises checkouts of one invoice, so two clicks at once agree on one checkout.
    await tx`SELECT 1 FROM payment_links WHERE invoice_id = ${view.invoiceId} FOR UPDATE`;
    if (view.balanceOere <= 0) return { kind: 'nothing_to_pay' as const, view };
    const [reusable] = await tx<{ id: string; checkout_url: string }[]>`
      SELECT id, checkout_url FROM checkout_sessions
      WHERE organization_id = ${view.organizationId} AND invoice_id = ${view.invoiceId} AND provider = ${deps.provider.name}
        AND method = ${method} AND language = ${language} AND amount_oere = ${view.balanceOere} AND status IN ${CHECKOUT_LIFECYCLE.in(tx, [OPEN_CHECKOUT_STATUS])} AND checkout_url IS NOT NULL
        AND created_at > now() - make_interval(secs => ${REUSE_WITHIN_MS / 1000}) AND expires_at > now() + interval '5 minutes'
      ORDER BY created_at DESC LIMIT 1`;
    if (reusable) return { kind: 'redirect' as const, url: reusable.checkout_url, sessionId: reusable.id, amountOere: view.balanceOere };
    const id = uuidv7();
    await tx`
      INSERT INTO checkout_sessions (id, organization_id, invoice_id, provider, method, amount_oere, language, status)
      VALUES (${id}, ${view.organizationId}, ${view.invoiceId}, ${deps.provider.name}, ${method}, ${view.balanceOere}, ${language}, ${OPEN_CHECKOUT_STATUS})`;
    return { kind: 'opened' as const, id, view };
  });
  if (opened.kind !== 'opened') return opened;

  const { id, view } = opened;
  const texts = language === 'da' ? { description: `Faktura nr. ${view.invoiceNumber}` } : { description: `Invoice no. ${view.invoiceNumber}` };
  const checkout = await deps.provider.createCheckout({
    clientReference: id,
    amountOere: view.balanceOere,
    currency: 'DKK',
    method,
    language,
    merchantName: view.creditorName,
    description: texts.description,
    returnUrl: `${base}/p/${view.reference}/return?session=${id}&lang=${language}`,
    cancelUrl: `${base}/p/${view.reference}?lang=${language}`,
    callbackUrl: `${base}/callbacks/${deps.provider.name}`,
  });
  await deps.db.tx((tx) => tx`
    UPDATE checkout_sessions SET provider_session_id = ${checkout.providerSessionId}, checkout_url = ${checkout.url},
      expires_at = ${checkout.expiresAt}, updated_at = now()
    WHERE id = ${id}`);
  return { kind: 'redirect', url: checkout.url, sessionId: id, amountOere: view.balanceOere };
}

export interface CheckoutStatus {
  status: CheckoutSessionStatus;
  amountOere: number;
  /** The amount the booked payment carried (what the provider captured), once succeeded. */
  paidOere: number | null;
  failureReason: string | null;
}

/** The checkout the customer returned from, if it belongs to this link. Its status comes from the provider's callbacks only. */
export async function checkoutStatus(sql: Queryable, reference: string, sessionId: string): Promise<CheckoutStatus | undefined> {
  if (!isUuid(sessionId)) return undefined;
  const [row] = await sql<{ status: CheckoutStatus['status']; amount_oere: number; paid_oere: number | null; failure_reason: string | null }[]>`
    SELECT s.status, s.amount_oere, p.amount_oere AS paid_oere, s.failure_reason
    FROM checkout_sessions s
    JOIN payment_links l ON l.organization_id = s.organization_id AND l.invoice_id = s.invoice_id
    LEFT JOIN payments p ON p.organization_id = s.organization_id AND p.id = s.payment_id
    WHERE s.id = ${sessionId} AND l.reference = ${reference}`;
  return row ? { status: row.status, amountOere: row.amount_oere, paidOere: row.paid_oere, failureReason: row.failure_reason } : undefined;
}
