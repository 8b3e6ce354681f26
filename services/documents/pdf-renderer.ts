import type { InvoiceDocumentView } from '../invoices/invoice-document.ts';
import type { ReceiptDocumentView } from '../payments/receipt-document.ts';

/**
 * Turns a frozen document view into PDF bytes. Use cases depend on this port only; the Chromium adapter lives in
 * activities/pdf. The bytes are not reproducible (a PDF carries its creation time), so the hash of an issued
 * document is the hash of the bytes stored, never recomputed from the view.
 */
export interface PdfRenderer {
  renderInvoice(view: InvoiceDocumentView): Promise<Buffer>;
  /** A payment's receipt, branded with the creditor's details. */
  renderReceipt(view: ReceiptDocumentView): Promise<Buffer>;
  /** Releases the renderer's resources (the browser); renders after close fail. */
  close(): Promise<void>;
}
