import { defineLifecycle } from '../shared/lifecycle.ts';

/**
 * The lifecycle of an invoice's send (invoice_sends.status, 003_invoice_sends.sql): one row per invoice, written in
 * the API's transaction and moved on by the mail workflow.
 *
 *   (send) → queued → sent (the server took the mail) | delivered (it said so at once) | failed (refused, bounced,
 *   given up); (send without an address) → failed; failed → queued (a new send tries again, with a new Message-ID).
 *
 * A send that is sent or delivered is answered from the row and never mailed twice; a queued one is handed to the
 * workflow again (the first hand-off may have been lost). The row is keyed by its invoice.
 */
export const INVOICE_SEND_STATUSES = ['queued', 'sent', 'delivered', 'failed'] as const;
export type InvoiceSendStatus = (typeof INVOICE_SEND_STATUSES)[number];

/** A send's first status: queued for the workflow, or failed at once (no address). */
export const QUEUED_SEND_STATUS = 'queued' as const satisfies InvoiceSendStatus;
export const FAILED_SEND_STATUS = 'failed' as const satisfies InvoiceSendStatus;

export const INVOICE_SEND_TRANSITIONS = {
  /** The mail server took the mail. */
  send: { from: ['queued'], to: 'sent' },
  /** The mail server accepted it for delivery in the same exchange. */
  deliver: { from: ['queued'], to: 'delivered' },
  /** Refused, undeliverable, or given up after retries: `failure_code` says why. */
  fail: { from: ['queued'], to: 'failed' },
  /** A new send after a failure: queued again with a new Message-ID. */
  retry: { from: ['failed'], to: 'queued' },
} as const;

export const INVOICE_SEND_LIFECYCLE = defineLifecycle({
  name: 'invoice send',
  table: 'invoice_sends',
  column: 'status',
  stateNoun: 'status',
  idColumn: 'invoice_id',
  touchColumn: null,
  states: INVOICE_SEND_STATUSES,
  transitions: INVOICE_SEND_TRANSITIONS,
});
