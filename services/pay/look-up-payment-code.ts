import type { Db } from '../shared/db.ts';
import { loadPayView } from '../payments/checkout.ts';
import { normalizePaymentCode } from '../payments/payment-links.ts';
import type { LookupLimiter } from './lookup-limiter.ts';

export type CodeLookUp =
  | { kind: 'invalid' }
  | { kind: 'limited'; retryAfterSeconds: number }
  | { kind: 'unknown' }
  | { kind: 'found'; reference: string };

/**
 * A payment code typed on the code page, to the link it opens. A code that cannot exist costs no look-up and no
 * token: it is a typo, answered at once. Every other look-up takes one from the client's bucket (lookup-limiter.ts),
 * and one that finds nothing also drains the shared one, which is what keeps a 40-bit code safe against guessing.
 */
export async function lookUpPaymentCode(db: Db, limiter: LookupLimiter, typed: string, clientAddress: string): Promise<CodeLookUp> {
  const code = normalizePaymentCode(typed);
  if (!code) return { kind: 'invalid' };
  const slot = await limiter.take(clientAddress);
  if (!slot.allowed) return { kind: 'limited', retryAfterSeconds: slot.retryAfterSeconds };
  const view = await db.read((sql) => loadPayView(sql, { code }));
  if (!view) {
    await limiter.miss();
    return { kind: 'unknown' };
  }
  return { kind: 'found', reference: view.reference };
}
