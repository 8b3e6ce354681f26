import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../shared/clock.ts';
import type { Db } from '../shared/db.ts';
import { handleProviderEvent, type HandledEvent } from '../payments/handle-provider-event.ts';
import type { PaymentProvider } from '../payments/providers/provider.ts';
import type { ReceiptDispatch } from '../payments/receipt-dispatch.ts';

export interface CallbackDeps {
  db: Db;
  clock: Clock;
  provider: PaymentProvider;
  receiptDispatch?: ReceiptDispatch | undefined;
}

/**
 * A provider's signed callback, the only way a payment is booked: the signature is checked over the exact bytes, the
 * event is applied in one transaction, and a payment it booked hands its receipt to the receipt workflow. That hand-off
 * may fail without harm: the payment is committed, and the housekeeping loop finds its receipt in the wake index.
 * Undefined for a callback without a valid signature; an event that cannot be read or booked throws
 * (InvalidProviderEvent, UnknownCheckoutSession, DomainError).
 */
export async function receiveProviderCallback(
  deps: CallbackDeps, headers: IncomingHttpHeaders, rawBody: Buffer, log: FastifyBaseLogger,
): Promise<HandledEvent | undefined> {
  if (!deps.provider.verifyCallback({ headers, rawBody })) return undefined;
  const event = deps.provider.parseEvent(rawBody);
  const handled = await deps.db.tx((tx) => handleProviderEvent(tx, { clock: deps.clock }, deps.provider.name, event));
  if (handled.effect === 'booked' && handled.paymentId && deps.receiptDispatch) {
    await deps.receiptDispatch.dispatch(handled.paymentId).catch((err: unknown) =>
      log.error({ err }, 'receipt hand-off failed; the payment is booked and the housekeeping loop renders its receipt'),
    );
  }
  return handled;
}
