/**
 * One JSON POST to a partner's HTTP API under the caller's idempotency key, with one reading of the answer: the
 * letter service (activities/letters/http-letters.ts) and the collection partner (activities/collections/
 * http-partner.ts) both go through it. The key goes as `Idempotency-Key`, so a retried POST (after a crash, or a
 * timeout whose request did arrive) is the same request to the partner, never a second one.
 *
 * What an answer means: 2xx taken, with the partner's `reference` (or `id`, where the partner names one) from a JSON
 * body, else the key; a 4xx refused for good, a DomainError with the caller's code that the workflow boundary turns
 * terminal (except 408, 425 and 429, which say "later"); a 5xx, a 3xx (redirects are not followed), a network failure
 * or no answer within the timeout a plain Error, retried under the step's policy. The logs name the key, the target
 * (scheme, host and path) and the status, never a header or the body.
 */
import type { ErrorCode } from '../../contracts/errors.ts';
import { DomainError } from '../../services/shared/errors.ts';
import { inChildSpan, SpanKind } from '../../services/observability/tracing.ts';

export type PostLog = (level: 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;

export interface IdempotentPostOptions {
  url: string;
  /** What the partner is, for messages and logs: 'letter service', 'collection partner'. */
  partner: string;
  /** What is posted, for messages: 'letter', 'hand-over'. */
  what: string;
  /** The log line of a request the partner took: 'letter handed to the letter service'. */
  takenLog: string;
  /** The DomainError code of a refusal for good. */
  rejectedCode: ErrorCode;
  /** The name of the key in the log lines: 'letterId', 'handOverId'. */
  keyField: string;
  /** The answer fields that may carry the partner's reference, in order. */
  referenceFields: readonly string[];
  log: PostLog;
  timeoutMs: number;
}

const RETRY_LATER = new Set([408, 425, 429]);

// The partner's own words, short and on one line (they may end up in a delivery record).
const excerpt = (text: string): string => text.replace(/\s+/g, ' ').trim().slice(0, 200);

function reasonOf(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    const message = typeof body.error === 'object' ? body.error?.message : (body.error ?? body.message);
    if (typeof message === 'string') return excerpt(message);
  } catch {
    // not JSON: the text itself
  }
  return excerpt(text);
}

function referenceOf(text: string, fields: readonly string[]): string | undefined {
  try {
    const parsed = JSON.parse(text) as Record<string, unknown>;
    return fields.map((f) => parsed[f]).find((v): v is string => typeof v === 'string' && v !== '');
  } catch {
    return undefined; // a 2xx without a JSON body: taken under our key
  }
}

/** A poster for one partner: `post(key, headers, body, logFields)` resolves with the partner's reference. */
export function createIdempotentPost(opts: IdempotentPostOptions) {
  const url = new URL(opts.url);
  // Where requests go, for the logs and messages: scheme, host and path, never a query or a credential.
  const target = `${url.protocol}//${url.host}${url.pathname}`;
  const { partner, what, log, timeoutMs } = opts;

  return async function post(key: string, headers: Record<string, string>, body: string, logFields: Record<string, unknown> = {}): Promise<{ reference: string }> {
    const fields = { [opts.keyField]: key, target, ...logFields };
    let res: Response;
    let text: string;
    try {
      // A CLIENT span under the step (its trace context is not sent: the partner is outside the service).
      ({ res, text } = await inChildSpan(
        `POST ${partner}`,
        { kind: SpanKind.CLIENT, attributes: { 'http.request.method': 'POST', 'server.address': url.hostname, 'url.full': target } },
        async (span) => {
          const answer = await fetch(url, {
            method: 'POST',
            headers: { 'content-type': 'application/json', accept: 'application/json', ...headers, 'idempotency-key': key },
            body,
            redirect: 'manual',
            signal: AbortSignal.timeout(timeoutMs),
          });
          span?.setAttribute('http.response.status_code', answer.status);
          return { res: answer, text: await answer.text() };
        },
      ));
    } catch (err) {
      const e = err as Error;
      const why = e.name === 'TimeoutError' || e.name === 'AbortError' ? `no answer within ${timeoutMs} ms` : `${e.message}${e.cause instanceof Error ? ` (${e.cause.message})` : ''}`;
      log('warn', `${partner} unreachable`, { ...fields, error: why });
      throw new Error(`the ${partner} at ${target} failed: ${why}`);
    }
    if (res.status >= 200 && res.status < 300) {
      const reference = referenceOf(text, opts.referenceFields) ?? key;
      log('info', opts.takenLog, { ...fields, status: res.status, reference });
      return { reference: reference.slice(0, 200) };
    }
    const reason = `${res.status}${text ? ` ${reasonOf(text)}` : ''}`;
    if (res.status >= 400 && res.status < 500 && !RETRY_LATER.has(res.status)) {
      log('warn', `${what} refused by the ${partner}`, { ...fields, status: res.status });
      throw new DomainError(opts.rejectedCode, `the ${partner} refused the ${what}: ${reason}`);
    }
    log('warn', `${partner} failed`, { ...fields, status: res.status });
    throw new Error(`the ${partner} answered ${reason}`);
  };
}
