/**
 * One-at-a-time per key, in this process: callers with the same key queue here, in order, instead of inside the
 * database. Used for credit notes, which render inside the transaction that holds the organisation's credit-note lock
 * (services/invoices/credit-queue.ts): without it a burst of one organisation's credit notes would hold every pool
 * connection while they wait on that lock, and stall every other organisation.
 */
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<unknown>>();

  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const current = previous.then(fn, fn);
    const tail = current.catch(() => undefined);
    this.tails.set(key, tail);
    try {
      return await current;
    } finally {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}
