import { KeyedMutex } from '../shared/keyed-mutex.ts';

const queue = new KeyedMutex();

/**
 * Runs `fn` (a whole credit-note request, transaction included) after this process's earlier credit notes of the
 * organisation have finished.
 *
 * Credit notes of one organisation are serialised across processes by a lock in PostgreSQL, taken at the start of
 * their transaction (credit-invoice.ts). A transaction that waits for that lock holds a pooled connection while it
 * waits, and a credit note renders its PDF inside its transaction, so without this queue a burst of one
 * organisation's credit notes would take every connection of the process, one render after another, and stall every
 * other organisation's requests. Queued here they wait without a connection: a process has at most one transaction
 * per organisation waiting for, or holding, the lock, whatever the number of processes.
 */
export function queueCreditNote<T>(organizationId: string, fn: () => Promise<T>): Promise<T> {
  return queue.run(organizationId, fn);
}
