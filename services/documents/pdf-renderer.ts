import type { CasePaakravView } from '../cases/case-paakrav-document.ts';
import type { InvoiceDocumentView } from '../invoices/invoice-document.ts';
import type { ReceiptDocumentView } from '../payments/receipt-document.ts';
import type { ReminderDocumentView } from '../reminders/reminder-document.ts';

/**
 * Every kind of document the renderer prints, with the frozen view it prints from. A new kind (a reminder, a demand
 * letter, a case letter) is an entry here, a view type and a template in the renderer's registry; the port keeps its
 * one method.
 */
export interface DocumentViews {
  invoice: InvoiceDocumentView & { kind: 'invoice' };
  /** Printed by the invoice template, naming the invoice it credits. */
  creditNote: InvoiceDocumentView & { kind: 'creditNote' };
  /** A payment's receipt, branded with the creditor's details. */
  receipt: ReceiptDocumentView;
  /** A reminder (rykker, payment reminder), and the demand letter (påkrav) when it is one. */
  reminder: ReminderDocumentView;
  /** A collection case's own demand letter (påkrav), when the invoice's reminders did not end in one. */
  casePaakrav: CasePaakravView;
}

export type DocumentKind = keyof DocumentViews;

/**
 * Turns a frozen document view into PDF bytes. Use cases depend on this port only; the Chromium adapter lives in
 * activities/pdf. The bytes are not reproducible (a PDF carries its creation time), so the hash of an issued
 * document is the hash of the bytes stored, never recomputed from the view.
 */
export interface PdfRenderer {
  /** Renders `view` with the template registered for `kind`. */
  render<K extends DocumentKind>(kind: K, view: DocumentViews[K]): Promise<Buffer>;
  /** Releases the renderer's resources (the browser); renders after close fail. */
  close(): Promise<void>;
}
