/**
 * The production letter service: a print-and-post provider's HTTP API (LETTER_API_URL). One JSON POST per letter,
 * authorised with `Authorization: Bearer LETTER_API_KEY`, carrying the PDF as base64 and the letter's id as
 * `Idempotency-Key`, so a retried send (after a crash or a timeout whose request did arrive) is the same letter to the
 * provider, never a second one.
 *
 * What an answer means: 2xx the letter was taken (`reference` from the response body, else the letter's id); a 4xx
 * the provider refused this letter for good, a DomainError `letter_rejected` that the workflow boundary turns terminal
 * (except 408, 425 and 429, which say "later"); a 5xx, a network failure or no answer within the timeout a plain
 * Error, retried under the step's policy. The key is never logged, nor is the recipient's address.
 */
import { DomainError } from '../../services/shared/errors.ts';
import type { Letter, LetterLog, LetterService } from '../../services/letters/letter-port.ts';

/** How long one POST may take, up to the whole response. */
export const LETTER_TIMEOUT_MS = 15_000;

export interface HttpLetterOptions {
  url: string;
  apiKey: string;
  log: LetterLog;
  /** Tests shorten it. */
  timeoutMs?: number;
}

/** The request body the provider receives. */
export interface LetterRequestBody {
  id: string;
  organizationId: string;
  documentSha256: string;
  /** The PDF, base64. */
  pdf: string;
  recipient: Letter['recipient'];
  sender: Letter['sender'];
}

const RETRY_LATER = new Set([408, 425, 429]);

// The provider's own words, short and on one line (they end up in the reminder's delivery_error).
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

export function createHttpLetterService(opts: HttpLetterOptions): LetterService {
  const url = new URL(opts.url);
  const timeoutMs = opts.timeoutMs ?? LETTER_TIMEOUT_MS;
  // Where letters go, for the logs: scheme, host and path, never the key.
  const target = `${url.protocol}//${url.host}${url.pathname}`;

  return {
    async send(letter) {
      const body: LetterRequestBody = {
        id: letter.id,
        organizationId: letter.organizationId,
        documentSha256: letter.documentSha256,
        pdf: letter.pdf.toString('base64'),
        recipient: letter.recipient,
        sender: letter.sender,
      };
      let res: Response;
      let text: string;
      try {
        res = await fetch(url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json',
            authorization: `Bearer ${opts.apiKey}`,
            'idempotency-key': letter.id,
          },
          body: JSON.stringify(body),
          redirect: 'manual',
          signal: AbortSignal.timeout(timeoutMs),
        });
        text = await res.text();
      } catch (err) {
        const e = err as Error;
        const why = e.name === 'TimeoutError' || e.name === 'AbortError' ? `no answer within ${timeoutMs} ms` : `${e.message}${e.cause instanceof Error ? ` (${e.cause.message})` : ''}`;
        opts.log('warn', 'letter service unreachable', { letterId: letter.id, target, error: why });
        throw new Error(`the letter service at ${target} failed: ${why}`);
      }
      if (res.status >= 200 && res.status < 300) {
        let reference = letter.id;
        try {
          const parsed = JSON.parse(text) as { reference?: unknown; id?: unknown };
          if (typeof parsed.reference === 'string' && parsed.reference) reference = parsed.reference;
          else if (typeof parsed.id === 'string' && parsed.id) reference = parsed.id;
        } catch {
          // a 2xx without a JSON body: the letter was taken, under our id
        }
        opts.log('info', 'letter handed to the letter service', { letterId: letter.id, organizationId: letter.organizationId, target, status: res.status, reference });
        return { reference: reference.slice(0, 200) };
      }
      const reason = `${res.status}${text ? ` ${reasonOf(text)}` : ''}`;
      if (res.status >= 400 && res.status < 500 && !RETRY_LATER.has(res.status)) {
        opts.log('warn', 'letter refused by the letter service', { letterId: letter.id, target, status: res.status });
        throw new DomainError('letter_rejected', `the letter service refused the letter: ${reason}`);
      }
      opts.log('warn', 'letter service failed', { letterId: letter.id, target, status: res.status });
      throw new Error(`the letter service answered ${reason}`);
    },
  };
}
