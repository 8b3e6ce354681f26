/**
 * A counting semaphore with a FIFO queue. Used to keep the number of queries in flight at or below the size of
 * the PostgreSQL pool: postgres.js slows down sharply once its own internal queue starts growing
 * (porsager/postgres#747), while waiting here costs one resolved promise.
 */
export class Semaphore {
  private available: number;
  readonly permits: number;
  private readonly waiters: (() => void)[] = [];
  private head = 0;

  constructor(permits: number) {
    this.available = permits;
    this.permits = permits;
  }

  acquire(): Promise<void> | undefined {
    if (this.available > 0) {
      this.available--;
      return undefined; // fast path: no promise allocated
    }
    return new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  release(): void {
    if (this.head < this.waiters.length) {
      const next = this.waiters[this.head]!;
      this.waiters[this.head++] = undefined as unknown as () => void;
      if (this.head > 1024 && this.head * 2 > this.waiters.length) {
        this.waiters.splice(0, this.head);
        this.head = 0;
      }
      next();
    } else {
      this.available++;
    }
  }

  /** Permits held right now. */
  get held(): number {
    return this.permits - this.available;
  }

  get queued(): number {
    return this.waiters.length - this.head;
  }
}
