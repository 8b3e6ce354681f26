import type { PaymentOutcome, PaymentSource } from '../../contracts/payments.ts';
import type { Keyring } from '../shared/crypto.ts';
import type { Queryable } from '../shared/db.ts';
import type { DocumentParty, InvoiceDocumentView } from '../invoices/invoice-document.ts';
import { loadBuyer, loadSeller, printedBuyer, printedSeller } from '../invoices/document-parties.ts';
import { loadDocumentLogo, type DocumentLogo } from '../branding/document-logo.ts';
import { hasProviderPaymentId } from './payment-queries.ts';

/**
 * What a payment receipt shows: the creditor (as it is when the receipt is made), the payer as printed on the
 * invoice, the invoice paid and the payment itself. Amounts are øre; formatting is the template's job.
 */
export interface ReceiptDocumentView {
  language: 'da' | 'en';
  paymentId: string;
  seller: InvoiceDocumentView['seller'];
  buyer: DocumentParty & { contactPerson: string | null };
  invoice: { number: number; issueDate: string; grossOere: number };
  payment: {
    amountOere: number;
    paymentDate: string;
    source: PaymentSource;
    /** The provider's payment id of a card or wallet payment; null for payments registered by the creditor. */
    providerPaymentId: string | null;
    outcome: PaymentOutcome;
    /** The part beyond the balance it met, which the payer now holds as credit. */
    surplusOere: number;
  };
  /** The organisation's light logo when the payment was booked (its receipt requested); absent or null: none. */
  logo?: DocumentLogo | null;
}

/** The receipt view of a payment, read from what is stored; undefined when no such payment exists. */
export async function loadReceiptView(sql: Queryable, keyring: Keyring, paymentId: string): Promise<{ organizationId: string; view: ReceiptDocumentView } | undefined> {
  const [p] = await sql<{
    organization_id: string; customer_id: string; source: PaymentSource; booking_key: string; amount_oere: number; payment_date: string;
    outcome: PaymentOutcome; surplus_oere: number; number: number; issue_date: string; gross_oere: number;
    buyer_snapshot: ReceiptDocumentView['buyer'] | null; logo_sha256: string | null;
  }[]>`
    SELECT p.organization_id, p.customer_id, p.source, p.booking_key, p.amount_oere, p.payment_date, p.outcome, p.surplus_oere,
           i.number, i.issue_date, i.gross_oere, i.buyer_snapshot, r.logo_sha256
    -- Through the payment's receipt request (every payment has one, from its insert trigger), which names the
    -- organisation the payment is keyed by.
    FROM payment_receipts r
    JOIN payments p ON p.organization_id = r.organization_id AND p.id = r.payment_id
    JOIN invoices i ON i.organization_id = p.organization_id AND i.id = p.invoice_id
    WHERE r.payment_id = ${paymentId}`;
  if (!p) return undefined;
  const seller = printedSeller(await loadSeller(sql, p.organization_id));
  // The customer's language now, so the receipt reads as the customer's mails do.
  const buyer = await loadBuyer(sql, keyring, p.organization_id, p.customer_id);
  const printed = p.buyer_snapshot ?? printedBuyer(buyer);
  return {
    organizationId: p.organization_id,
    view: {
      language: buyer.language,
      paymentId,
      seller,
      buyer: printed,
      invoice: { number: p.number, issueDate: p.issue_date, grossOere: p.gross_oere },
      payment: {
        amountOere: p.amount_oere,
        paymentDate: p.payment_date,
        source: p.source,
        providerPaymentId: hasProviderPaymentId(p.source) ? p.booking_key : null,
        outcome: p.outcome,
        surplusOere: p.surplus_oere,
      },
      logo: await loadDocumentLogo(sql, p.organization_id, p.logo_sha256),
    },
  };
}
