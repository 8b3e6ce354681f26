import type { Db } from '../shared/db.ts';
import type { InvoiceMailDispatch } from './send-invoice.ts';

/**
 * Hands on again every send that has stayed queued for longer than `olderThanMs`: the post-commit hand-off to the
 * workflow engine can be lost (the API died, Restate was unreachable). Safe to repeat: the workflow mails a queued
 * send once, whoever asks, and only while it is still queued. Returns how many were handed on.
 */
export async function sweepQueuedSends(db: Db, dispatch: InvoiceMailDispatch, opts: { olderThanMs: number; limit?: number }): Promise<number> {
  const rows = await db.read((sql) => sql<{ organization_id: string; invoice_id: string }[]>`
    SELECT organization_id, invoice_id FROM invoice_sends
    WHERE status = 'queued' AND requested_at < now() - make_interval(secs => ${opts.olderThanMs / 1000})
    ORDER BY requested_at
    LIMIT ${opts.limit ?? 500}`);
  let handed = 0;
  for (const r of rows) {
    await dispatch.dispatch(r.organization_id, r.invoice_id);
    handed++;
  }
  return handed;
}
