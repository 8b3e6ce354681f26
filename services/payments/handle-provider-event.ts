import type { Clock } from '../shared/clock.ts';
import type { Tx } from '../shared/db.ts';
import { isUuid } from '../shared/ids.ts';
import { bookPayment } from './book-payment.ts';
import { CHECKOUT_LIFECYCLE, isCheckoutFinal, type CheckoutSessionStatus } from './checkout-lifecycle.ts';
import { findPaymentByBookingKey } from './payment-queries.ts';
import { InvalidProviderEvent, type ProviderEvent } from './providers/provider.ts';

/** What a verified callback did. */
export type ProviderEventEffect =
  /** A new payment was booked. */
  | 'booked'
  /** The provider's payment had been booked already (a redelivery, or another event of the same payment). */
  | 'already_booked'
  /** A failed attempt was recorded on the checkout. */
  | 'failed'
  /** A failure reported after the checkout had succeeded: late, and changes nothing. */
  | 'stale'
  /** An event type the service does not act on. */
  | 'ignored'
  /** This very event (same provider event id) was handled before. */
  | 'duplicate';

export interface HandledEvent {
  effect: ProviderEventEffect;
  /** The payment the event is about, when one was booked by it or before it. */
  paymentId?: string;
}

export class UnknownCheckoutSession extends Error {
  constructor(reference: string) {
    super(`no checkout session ${reference} of this provider`);
    this.name = 'UnknownCheckoutSession';
  }
}

/**
 * Applies one verified provider event, in the caller's transaction.
 *
 * Exactly-once booking rests on the provider's payment id: it is the payment's booking key (unique per organisation
 * and channel), so a redelivered or duplicated `payment_succeeded` finds the payment it booked and books nothing. The
 * checkout row is locked first, so events of one checkout apply one at a time, whatever order they arrive in. A
 * checkout's status only moves forward (open → failed → succeeded), so a failure delivered after the success is
 * recorded as stale and changes nothing. The payment is dated the organisation's today (its business clock) and
 * carries the amount the provider reports as captured: if the balance changed since the checkout opened, the
 * payment's outcome says so and any surplus is kept as customer credit, never lost.
 */
export async function handleProviderEvent(tx: Tx, deps: { clock: Clock }, provider: string, event: ProviderEvent): Promise<HandledEvent> {
  const [seen] = await tx<{ effect: ProviderEventEffect; payment_id: string | null }[]>`
    SELECT effect, payment_id FROM provider_events WHERE provider = ${provider} AND event_id = ${event.eventId}`;
  if (seen) return { effect: 'duplicate', ...(seen.payment_id ? { paymentId: seen.payment_id } : {}) };

  if (event.kind === 'ignored') {
    await record(tx, provider, event.eventId, event.type, null, null, 'ignored', null, null);
    return { effect: 'ignored' };
  }
  if (!isUuid(event.clientReference)) throw new UnknownCheckoutSession(event.clientReference);
  const [session] = await tx<{ id: string; organization_id: string; invoice_id: string; status: CheckoutSessionStatus; payment_id: string | null }[]>`
    SELECT id, organization_id, invoice_id, status, payment_id FROM checkout_sessions
    WHERE id = ${event.clientReference} AND provider = ${provider}
    FOR UPDATE`;
  if (!session) throw new UnknownCheckoutSession(event.clientReference);

  if (event.kind === 'payment_failed') {
    const stale = isCheckoutFinal(session.status);
    if (!stale) {
      await CHECKOUT_LIFECYCLE.transition(tx, session.id, 'fail', {
        organizationId: session.organization_id,
        set: tx`failure_reason = ${event.reason.slice(0, 200)}`,
      });
    }
    const effect = stale ? 'stale' : 'failed';
    await record(tx, provider, event.eventId, 'payment_failed', session, event.providerPaymentId, effect, null, event.occurredAt);
    return { effect };
  }

  if (event.currency !== 'DKK') throw new InvalidProviderEvent(`the payment is in ${event.currency}; only DKK is taken`);
  const earlier = await findPaymentByBookingKey(tx, session.organization_id, event.method, event.providerPaymentId);
  let paymentId: string;
  let effect: ProviderEventEffect;
  if (earlier) {
    paymentId = earlier.id;
    effect = 'already_booked';
  } else {
    const booked = await bookPayment(tx, deps, session.organization_id, session.invoice_id, {
      source: event.method,
      bookingKey: event.providerPaymentId,
      amountOere: event.amountOere,
    });
    paymentId = booked.payment.id;
    effect = booked.replayed ? 'already_booked' : 'booked';
  }
  // The first payment of a checkout stays its payment; a second one (the provider let it be paid twice) is still
  // booked above, as the customer's money.
  if (!isCheckoutFinal(session.status)) {
    await CHECKOUT_LIFECYCLE.transition(tx, session.id, 'succeed', {
      organizationId: session.organization_id,
      set: tx`payment_id = ${paymentId}, failure_reason = NULL`,
    });
  }
  await record(tx, provider, event.eventId, 'payment_succeeded', session, event.providerPaymentId, effect, paymentId, event.occurredAt);
  return { effect, paymentId };
}

async function record(
  tx: Tx,
  provider: string,
  eventId: string,
  type: string,
  session: { id: string; organization_id: string } | null,
  providerPaymentId: string | null,
  effect: Exclude<ProviderEventEffect, 'duplicate'>,
  paymentId: string | null,
  occurredAt: Date | null,
): Promise<void> {
  // A concurrent delivery of the same event may have recorded it meanwhile (it waited on the checkout lock and then
  // found the payment booked): the first record stays.
  await tx`
    INSERT INTO provider_events (provider, event_id, type, checkout_session_id, organization_id, provider_payment_id, effect, payment_id, occurred_at)
    VALUES (${provider}, ${eventId}, ${type.slice(0, 100)}, ${session?.id ?? null}, ${session?.organization_id ?? null}, ${providerPaymentId},
            ${effect}, ${paymentId}, ${occurredAt})
    ON CONFLICT (provider, event_id) DO NOTHING`;
}
