/**
 * One-at-a-time per key, in this process: callers with the same key queue here, in order, instead of inside the
 * database. Used for issuing, which locks the organisation's number series: without it a burst of one organisation's
 * issues would hold every pool connection while they wait on that row lock, and stall every other organisation.
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
