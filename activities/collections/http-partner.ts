/**
 * The production collection partner: one JSON POST per hand-over to COLLECTION_PARTNER_URL, signed per Standard
 * Webhooks (https://www.standardwebhooks.com) with COLLECTION_PARTNER_SECRET: `webhook-id` is the handOverId,
 * `webhook-timestamp` the time of this attempt, `webhook-signature` a v1 HMAC-SHA256 over "id.timestamp.body"
 * (services/webhooks/signing.ts). The handOverId also goes as `Idempotency-Key`, so a retried hand-over (after a crash
 * or a timeout whose request did arrive) is the same hand-over to the partner, never a second one.
 *
 * What an answer means: 2xx the case was taken (`reference` from a JSON body's `reference`, else the handOverId); a 4xx
 * the partner refused this hand-over for good, DomainError `collection_partner_rejected` that the workflow boundary
 * turns terminal (except 408, 425 and 429, which say "later"); a 5xx, a 3xx (redirects are not followed), a network
 * failure or no answer within the timeout a plain Error, retried under the step's policy. Neither the secret nor the
 * document (it holds CPR numbers) is logged; the logs name the hand-over, the target and the status.
 */
import type { CollectionPartner, HandOverDocument } from '../../services/collections/partner-port.ts';
import { DomainError } from '../../services/shared/errors.ts';
import { sign } from '../../services/webhooks/signing.ts';
import type { CollectionPartnerLog } from './local-partner.ts';

/** How long one POST may take, up to the whole response. */
export const COLLECTION_PARTNER_TIMEOUT_MS = 15_000;

export interface HttpCollectionPartnerOptions {
  url: string;
  /** `whsec_` + base64 of the key (Standard Webhooks). */
  secret: string;
  log: CollectionPartnerLog;
  /** Tests shorten it. */
  timeoutMs?: number;
  /** The signing time; tests pass a fixed clock. */
  now?: () => Date;
}

const RETRY_LATER = new Set([408, 425, 429]);

// The partner's own words, short and on one line.
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

/** The headers of one attempt: the Standard Webhooks triple, the idempotency key and the content type. */
export function handOverHeaders(secret: string, handOverId: string, timestampSec: number, body: string): Record<string, string> {
  return {
    'content-type': 'application/json',
    accept: 'application/json',
    'webhook-id': handOverId,
    'webhook-timestamp': String(timestampSec),
    'webhook-signature': sign(secret, handOverId, timestampSec, body),
    'idempotency-key': handOverId,
  };
}

export function createHttpCollectionPartner(opts: HttpCollectionPartnerOptions): CollectionPartner {
  const url = new URL(opts.url);
  const timeoutMs = opts.timeoutMs ?? COLLECTION_PARTNER_TIMEOUT_MS;
  const now = opts.now ?? (() => new Date());
  // Where hand-overs go, for the logs: scheme, host and path.
  const target = `${url.protocol}//${url.host}${url.pathname}`;

  return {
    async handOver(doc: HandOverDocument) {
      const body = JSON.stringify(doc);
      const timestampSec = Math.floor(now().getTime() / 1000);
      const id = doc.handOverId;
      let res: Response;
      let text: string;
      try {
        res = await fetch(url, {
          method: 'POST',
          headers: handOverHeaders(opts.secret, id, timestampSec, body),
          body,
          redirect: 'manual',
          signal: AbortSignal.timeout(timeoutMs),
        });
        text = await res.text();
      } catch (err) {
        const e = err as Error;
        const why = e.name === 'TimeoutError' || e.name === 'AbortError' ? `no answer within ${timeoutMs} ms` : `${e.message}${e.cause instanceof Error ? ` (${e.cause.message})` : ''}`;
        opts.log('warn', 'collection partner unreachable', { handOverId: id, target, error: why });
        throw new Error(`the collection partner at ${target} failed: ${why}`);
      }
      if (res.status >= 200 && res.status < 300) {
        let reference = id;
        try {
          const parsed = JSON.parse(text) as { reference?: unknown };
          if (typeof parsed.reference === 'string' && parsed.reference) reference = parsed.reference;
        } catch {
          // a 2xx without a JSON body: the case was taken, under our id
        }
        opts.log('info', 'case handed to the collection partner', { handOverId: id, target, status: res.status, reference });
        return { reference: reference.slice(0, 200) };
      }
      const reason = `${res.status}${text ? ` ${reasonOf(text)}` : ''}`;
      if (res.status >= 400 && res.status < 500 && !RETRY_LATER.has(res.status)) {
        opts.log('warn', 'hand-over refused by the collection partner', { handOverId: id, target, status: res.status });
        throw new DomainError('collection_partner_rejected', `the collection partner refused the hand-over: ${reason}`);
      }
      opts.log('warn', 'collection partner failed', { handOverId: id, target, status: res.status });
      throw new Error(`the collection partner answered ${reason}`);
    },
  };
}
