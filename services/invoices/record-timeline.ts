import type { Queryable } from '../shared/db.ts';
import { uuidv7 } from '../shared/ids.ts';

/**
 * Stable timeline codes (GET /v1/invoices/{id}/timeline): what happened to an invoice, in order. Written in the
 * transaction of the change (or by the workflow step that observed it, e.g. the mail server's answer).
 */
export type TimelineCode = 'created' | 'issued' | 'sent' | 'delivered' | 'opened' | 'send_failed' | 'einvoice_sent' | 'einvoice_failed' | 'credited' | 'payment' | 'reminder' | 'collections_ready' | 'collections' | 'limitation_warning' | 'terms_accepted' | 'interest_posted' | 'compensation'
  | 'payment_plan.created' | 'payment_plan.completed' | 'payment_plan.broken' | 'payment_plan.cancelled';

export async function recordTimeline(
  sql: Queryable,
  organizationId: string,
  invoiceId: string,
  code: TimelineCode,
  data: Record<string, unknown> = {},
  /** When it happened, if not at the transaction's start (a payment: the moment it was booked under the invoice's lock). */
  at?: Date,
): Promise<void> {
  await sql`
    INSERT INTO invoice_timeline (id, organization_id, invoice_id, code, data, at)
    VALUES (${uuidv7()}, ${organizationId}, ${invoiceId}, ${code}, ${sql.json(data as never)}, ${at ?? sql`now()`})`;
}
