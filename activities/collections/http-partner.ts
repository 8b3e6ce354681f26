/**
 * The production collection partner: one JSON POST per hand-over to COLLECTION_PARTNER_URL, signed per Standard
 * Webhooks (https://www.standardwebhooks.com) with COLLECTION_PARTNER_SECRET: `webhook-id` is the handOverId,
 * `webhook-timestamp` the time of this attempt, `webhook-signature` a v1 HMAC-SHA256 over "id.timestamp.body"
 * (services/webhooks/signing.ts). The handOverId also goes as `Idempotency-Key`, so a retried hand-over (after a crash
 * or a timeout whose request did arrive) is the same hand-over to the partner, never a second one.
 *
 * What an answer means is the one reading of activities/http/idempotent-post.ts: a refusal for good is a DomainError
 * `collection_partner_rejected`. Neither the secret nor the document (it holds CPR numbers) is logged; the logs name
 * the hand-over, the target and the status.
 */
import type { CollectionPartner, HandOverDocument } from '../../services/collections/partner-port.ts';
import { sign } from '../../services/webhooks/signing.ts';
import { createIdempotentPost } from '../http/idempotent-post.ts';
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

/** The Standard Webhooks triple of one attempt (the poster adds the idempotency key and the content type). */
function handOverHeaders(secret: string, handOverId: string, timestampSec: number, body: string): Record<string, string> {
  return {
    'webhook-id': handOverId,
    'webhook-timestamp': String(timestampSec),
    'webhook-signature': sign(secret, handOverId, timestampSec, body),
  };
}

export function createHttpCollectionPartner(opts: HttpCollectionPartnerOptions): CollectionPartner {
  const post = createIdempotentPost({
    url: opts.url,
    partner: 'collection partner',
    what: 'hand-over',
    takenLog: 'case handed to the collection partner',
    rejectedCode: 'collection_partner_rejected',
    keyField: 'handOverId',
    referenceFields: ['reference'],
    log: opts.log,
    timeoutMs: opts.timeoutMs ?? COLLECTION_PARTNER_TIMEOUT_MS,
  });
  const now = opts.now ?? (() => new Date());
  return {
    handOver(doc: HandOverDocument) {
      const body = JSON.stringify(doc);
      return post(doc.handOverId, handOverHeaders(opts.secret, doc.handOverId, Math.floor(now().getTime() / 1000), body), body);
    },
  };
}
