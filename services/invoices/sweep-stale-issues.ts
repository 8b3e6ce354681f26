import type { Db } from '../shared/db.ts';
import { findStaleIssues } from './finish-issue.ts';
import { sendToRestate } from '../shared/restate-ingress.ts';

/** Hands a reserved, unfinished issue to the durable finisher. Implemented over Restate. */
export interface IssueFinisher {
  finish(invoiceId: string): Promise<void>;
}

/**
 * Hands every issue reserved longer than `olderThanMs` ago to the durable finisher: its request died between the
 * reservation and the finish, or could not render. Safe to repeat: finishing is idempotent. Returns how many.
 */
export async function sweepStaleIssues(db: Db, finisher: IssueFinisher, opts: { olderThanMs: number; limit?: number }): Promise<number> {
  const ids = await findStaleIssues(db, opts.olderThanMs, opts.limit);
  for (const id of ids) await finisher.finish(id);
  return ids.length;
}

/** The finisher over Restate's ingress: a one-way call to the InvoiceIssue object of the invoice. */
export function createRestateIssueFinisher(ingressUrl: string): IssueFinisher {
  return {
    finish: (invoiceId) => sendToRestate(ingressUrl, `InvoiceIssue/${encodeURIComponent(invoiceId)}/finish`, 'issue hand-off'),
  };
}
