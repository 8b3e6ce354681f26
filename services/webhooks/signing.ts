import { createHmac } from 'node:crypto';
import { randomBytesPooled } from '../shared/crypto.ts';

/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com): the secret is `whsec_` plus base64 of the key
 * bytes; a signature is `v1,` plus base64(HMAC-SHA256(key, "<webhook-id>.<webhook-timestamp>.<body>")). During the
 * 24 hours after a rotation the header carries one signature per live secret, separated by a space, so receivers
 * holding either secret verify.
 */
export const SECRET_PREFIX = 'whsec_';

/** 32 random bytes: the Standard Webhooks range is 24..64. */
export const newSigningSecret = (): string => `${SECRET_PREFIX}${randomBytesPooled(32).toString('base64')}`;

/**
 * How long the previous secret keeps signing after a rotation (docs/api-conventions.md, "Events, webhooks and the test
 * clock", Signing).
 */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

export function sign(secret: string, messageId: string, timestampSec: number, body: string): string {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${messageId}.${timestampSec}.${body}`).digest('base64')}`;
}

/** The webhook-signature header: the current secret first, then any secret still inside its overlap. */
export const signatureHeader = (secrets: string[], messageId: string, timestampSec: number, body: string): string =>
  secrets.map((s) => sign(s, messageId, timestampSec, body)).join(' ');
