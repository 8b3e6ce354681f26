import type { Queryable } from '../shared/db.ts';
import { recordTimeline } from './record-timeline.ts';

/** The first fetch of an invoice mail's tracking pixel puts `opened` on the timeline; later fetches change nothing. */
export async function recordInvoiceOpened(sql: Queryable, organizationId: string, invoiceId: string): Promise<boolean> {
  const [inv] = await sql`SELECT 1 FROM invoices WHERE organization_id = ${organizationId} AND id = ${invoiceId} FOR UPDATE`;
  if (!inv) return false;
  const [seen] = await sql`SELECT 1 FROM invoice_timeline WHERE organization_id = ${organizationId} AND invoice_id = ${invoiceId} AND code = 'opened'`;
  if (seen) return false;
  await recordTimeline(sql, organizationId, invoiceId, 'opened');
  return true;
}
