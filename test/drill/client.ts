/**
 * The drill's HTTP client: the public API as an integrator's code calls it, with the retry every integrator is told
 * to make (docs/api-conventions.md, "Idempotency"): the same request with the same Idempotency-Key after a
 * connection error, a 5xx, a 429 or `409 idempotency_in_progress`, until it gets an answer that is the operation's own.
 */

export interface Answer {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

/** Why requests had to be sent again, over the whole drill. */
export interface RetryCounts {
  connectionError: number;
  serverError: number;
  inProgress: number;
  rateLimited: number;
}

export const newRetryCounts = (): RetryCounts => ({ connectionError: 0, serverError: 0, inProgress: 0, rateLimited: 0 });

export class ApiClient {
  readonly baseUrl: string;
  readonly key: string;
  private readonly retries: RetryCounts;

  constructor(baseUrl: string, key: string, retries: RetryCounts) {
    this.baseUrl = baseUrl;
    this.key = key;
    this.retries = retries;
  }

  /** One attempt; throws on a connection error or timeout. */
  async once(method: string, path: string, opts: { body?: unknown; idempotencyKey?: string; timeoutMs?: number } = {}): Promise<Answer> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.key}` };
    if (opts.idempotencyKey) headers['idempotency-key'] = opts.idempotencyKey;
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers,
      ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
      signal: AbortSignal.timeout(opts.timeoutMs ?? 30_000),
    });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      /* a proxy's error page */
    }
    return { status: res.status, body };
  }

  /**
   * Sends until the answer is the operation's own (2xx or a 4xx refusal), with the same key every time; undefined
   * when `giveUpMs` passed without one. `onNoAnswer` is told of each attempt whose outcome the client cannot know:
   * no answer at all, or a 5xx (from a proxy whose backend died under the request, say).
   */
  async untilAnswered(
    method: string,
    path: string,
    opts: { body?: unknown; idempotencyKey?: string; giveUpMs?: number; onNoAnswer?: () => void },
  ): Promise<Answer | undefined> {
    const until = Date.now() + (opts.giveUpMs ?? 60_000);
    for (;;) {
      let wait = 200;
      try {
        const a = await this.once(method, path, opts);
        if (a.status < 500 && a.status !== 429 && !(a.status === 409 && a.body?.error?.code === 'idempotency_in_progress')) return a;
        if (a.status === 429) this.retries.rateLimited++;
        else if (a.status === 409) this.retries.inProgress++;
        else {
          this.retries.serverError++;
          opts.onNoAnswer?.();
        }
        if (a.status === 429 || a.status === 409) wait = 1000;
      } catch {
        this.retries.connectionError++;
        opts.onNoAnswer?.();
      }
      if (Date.now() + wait > until) return undefined;
      await new Promise((r) => setTimeout(r, wait));
    }
  }
}
