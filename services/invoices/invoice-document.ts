import type { DocumentLogo } from '../branding/document-logo.ts';
import type { Fik } from '../payments/fik-payment-id.ts';

/**
 * What an issued invoice or credit note document shows (Momsbekendtgørelsen § 58; docs/api-conventions.md, "Invoices
 * and credit notes"): everything the PDF template needs, already computed and frozen. Amounts are øre; formatting is
 * the template's job.
 */
export type ExemptionReason = 'ML13' | 'OMVENDT' | 'EU_VARE' | 'EKSPORT';

export interface DocumentParty {
  name: string;
  cvr: string | null;
  street: string | null;
  postalCode: string | null;
  city: string | null;
  country: string | null;
}

export interface InvoiceDocumentView {
  language: 'da' | 'en';
  kind: 'invoice' | 'creditNote';
  number: number;
  issueDate: string;
  /** null on credit notes (nothing to pay). */
  dueDate: string | null;
  seller: DocumentParty & { email: string | null; bankReg: string | null; bankAccount: string | null };
  /**
   * The buyer as frozen at issue. The e-invoice address (`ean`, `peppolId`) and `vatNumber` are frozen with it
   * (docs/einvoicing.md); documents issued before they existed have none (absent).
   */
  buyer: DocumentParty & { contactPerson: string | null; ean?: string | null; peppolId?: string | null; vatNumber?: string | null };
  heading: string | null;
  message: string | null;
  customerReference: string | null;
  senderReference: string | null;
  /** The buyer's reference and order number (Peppol BT-10, BT-13): printed, and carried by the e-invoice. */
  buyerReference: string | null;
  orderReference: string | null;
  lines: {
    description: string;
    /** Exact decimal text, e.g. "1.5". */
    quantity: string;
    unit: string | null;
    unitPriceOere: number;
    discount: { type: 'percent' | 'amount'; value: number } | null;
    discountOere: number;
    netOere: number;
    /** The line's own VAT as the invoice computed it (absent in views made without the invoice's lines). */
    vatOere?: number;
    vatRateBps: number;
    vatExemptionReason: ExemptionReason | null;
  }[];
  /** One row per VAT rate > 0, VAT computed over the summed nets of that rate. */
  vatSummary: { vatRateBps: number; netOere: number; vatOere: number }[];
  /** Lines without VAT, grouped by their exemption reason (shown apart, with the wording). */
  exemptSummary: { reason: ExemptionReason; netOere: number }[];
  netOere: number;
  vatOere: number;
  grossOere: number;
  /** For a credit note: the invoice it credits (number and date must be printed) and why. */
  credits: { number: number; issueDate: string; reason: string } | null;
  /** The organisation's light logo as recorded at issue (services/branding/document-logo.ts); absent or null: none. */
  logo?: DocumentLogo | null;
  /**
   * How the debtor pays online (docs/bank-payments.md): the invoice's payment link, made when the invoice is issued,
   * printed with its QR code beside the bank details and carried by the mail. Absent or null: none (credit notes,
   * documents issued before invoices printed their link).
   */
  paymentLink?: { url: string; paymentCode: string } | null;
  /** The FI-kort +71 payment id the invoice was issued with (docs/bank-payments.md); absent or null: none. */
  fik?: Fik | null;
}
