import type { Db } from '../shared/db.ts';
import type { ReceiptDispatch } from './receipt-dispatch.ts';
import { findPendingReceipts } from './render-receipt.ts';

/**
 * Hands on again every receipt still waiting after `olderThanMs`: the post-commit hand-off to the workflow engine
 * can be lost. Safe to repeat: rendering a receipt is idempotent. Returns how many were handed on.
 */
export async function sweepPendingReceipts(db: Db, dispatch: ReceiptDispatch, opts: { olderThanMs: number; limit?: number }): Promise<number> {
  const ids = await findPendingReceipts(db, opts.olderThanMs, opts.limit);
  for (const id of ids) await dispatch.dispatch(id);
  return ids.length;
}
