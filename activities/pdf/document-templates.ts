import type { DocumentKind, DocumentViews } from '../../services/documents/pdf-renderer.ts';
import type { InvoiceDocumentView } from '../../services/invoices/invoice-document.ts';
import { renderCasePaakravHtml } from './case-paakrav-template.ts';
import { renderInvoiceHtml } from './invoice-template.ts';
import { renderReceiptHtml } from './receipt-template.ts';
import { renderReminderHtml } from './reminder-template.ts';

/** An invoice-template kind: the view must say it is that kind, since the template prints its heading from the view. */
const invoiceTemplate =
  <K extends InvoiceDocumentView['kind']>(kind: K) =>
  (view: DocumentViews[K]): string => {
    if (view.kind !== kind) throw new TypeError(`a view of kind ${view.kind} rendered as ${kind}`);
    return renderInvoiceHtml(view);
  };

/**
 * The template of every document kind: one entry per kind, each turning that kind's frozen view into self-contained
 * HTML. A new kind adds its view type to DocumentViews and its template here.
 */
export const DOCUMENT_TEMPLATES: { [K in DocumentKind]: (view: DocumentViews[K]) => string } = {
  invoice: invoiceTemplate('invoice'),
  creditNote: invoiceTemplate('creditNote'),
  receipt: renderReceiptHtml,
  reminder: renderReminderHtml,
  casePaakrav: renderCasePaakravHtml,
};

/** The HTML of `view` by the template registered for `kind`. */
export function documentHtml<K extends DocumentKind>(kind: K, view: DocumentViews[K]): string {
  const template: (view: DocumentViews[K]) => string = DOCUMENT_TEMPLATES[kind];
  return template(view);
}
