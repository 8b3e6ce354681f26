import assert from 'node:assert/strict';
import { DOCUMENT_TEMPLATES, documentHtml } from '../../activities/pdf/document-templates.ts';
import { renderCasePaakravHtml } from '../../activities/pdf/case-paakrav-template.ts';
import { renderInvoiceHtml } from '../../activities/pdf/invoice-template.ts';
import { renderReceiptHtml } from '../../activities/pdf/receipt-template.ts';
import { renderReminderHtml } from '../../activities/pdf/reminder-template.ts';
import type { DocumentViews } from '../../services/documents/pdf-renderer.ts';

/** The renderer's template registry: one template per document kind, chosen by the kind the caller names. */

const seller: DocumentViews['invoice']['seller'] = {
  name: 'Bager Hansen ApS', cvr: '12345678', street: 'Bagergade 12', postalCode: '8000', city: 'Aarhus C', country: null,
  email: 'faktura@bagerhansen.dk', bankReg: '1234', bankAccount: '0012345678',
};
const buyer: DocumentViews['invoice']['buyer'] = {
  name: 'Ida Jensen', cvr: null, street: 'Vestergade 2', postalCode: '5000', city: 'Odense C', country: null, contactPerson: null,
};
const invoice: DocumentViews['invoice'] = {
  language: 'da', kind: 'invoice', number: 17, issueDate: '2026-03-02', dueDate: '2026-03-16', seller, buyer,
  heading: null, message: null, customerReference: null, senderReference: null, buyerReference: null, orderReference: null,
  lines: [{ description: 'Rugbrød', quantity: '2', unit: null, unitPriceOere: 4000, discount: null, discountOere: 0, netOere: 8000, vatRateBps: 2500, vatExemptionReason: null }],
  vatSummary: [{ vatRateBps: 2500, netOere: 8000, vatOere: 2000 }], exemptSummary: [],
  netOere: 8000, vatOere: 2000, grossOere: 10000, credits: null,
};
const creditNote: DocumentViews['creditNote'] = {
  ...invoice, kind: 'creditNote', number: 18, dueDate: null, credits: { number: 17, issueDate: '2026-03-02', reason: 'Fejl i antal' },
};
const receipt: DocumentViews['receipt'] = {
  language: 'da', paymentId: '0190a0a0-0000-7000-8000-000000000001', seller, buyer,
  invoice: { number: 17, issueDate: '2026-03-02', grossOere: 10000 },
  payment: { amountOere: 10000, paymentDate: '2026-03-10', source: 'manual', providerPaymentId: null, outcome: 'paid_in_full', surplusOere: 0 },
};
const reminder: DocumentViews['reminder'] = {
  kind: 'reminder', language: 'da', reminderId: '0190a0a0-0000-7000-8000-000000000002', type: 'reminder', reminderNumber: 1, demandLetter: false,
  sentOn: '2026-03-23', deadline: '2026-04-02', seller, buyer, invoice: { number: 17, issueDate: '2026-03-02', dueDate: '2026-03-16', grossOere: 10000 },
  principalOere: 10000, feesBeforeOere: 0, feeOere: 10000, interestBeforeOere: 0, compensationBeforeOere: 0, interest: [], compensationOere: 0, paidTowardsFeesOere: 0, totalOere: 20000, paymentLink: null,
};
const casePaakrav: DocumentViews['casePaakrav'] = {
  kind: 'casePaakrav', language: 'da', caseId: '0190a0a0-0000-7000-8000-000000000003', caseNumber: 4, externalReference: 'sag-4',
  invoiceNumber: null, sentOn: '2026-03-23', deadline: '2026-04-02', creditor: seller,
  debtors: [{ name: 'Ida Jensen', cvr: null, street: 'Vestergade 2', postalCode: '5000', city: 'Odense C', country: null }],
  claims: [{ principalOere: 10000, dueDate: '2026-03-16', invoiceDate: '2026-03-02', description: 'Rugbrød' }],
  feesOere: 0, paidOere: 0, totalOere: 10000, paymentReference: 'sag-4',
};

describe('document template registry', () => {
  it('has one template per document kind', () => {
    assert.deepEqual(Object.keys(DOCUMENT_TEMPLATES).sort(), ['casePaakrav', 'creditNote', 'invoice', 'receipt', 'reminder']);
  });

  it('renders each kind with its template, exactly as the template alone does', () => {
    assert.equal(documentHtml('invoice', invoice), renderInvoiceHtml(invoice));
    assert.equal(documentHtml('creditNote', creditNote), renderInvoiceHtml(creditNote));
    assert.equal(documentHtml('receipt', receipt), renderReceiptHtml(receipt));
    assert.equal(documentHtml('reminder', reminder), renderReminderHtml(reminder));
    assert.equal(documentHtml('casePaakrav', casePaakrav), renderCasePaakravHtml(casePaakrav));
  });

  it('refuses an invoice view named as the other kind', () => {
    assert.throws(() => documentHtml('creditNote', invoice as never), /a view of kind invoice rendered as creditNote/);
    assert.throws(() => documentHtml('invoice', creditNote as never), /a view of kind creditNote rendered as invoice/);
  });
});
