import assert from 'node:assert/strict';
import { CUSTOM_DOMAIN_LIFECYCLE } from '../../services/customer-portal/custom-domain-lifecycle.ts';
import { PAYMENT_DOMAIN_LIFECYCLE } from '../../services/domains/payment-domain-lifecycle.ts';
import { INVOICE_SEND_LIFECYCLE } from '../../services/invoices/invoice-send-lifecycle.ts';
import { VERIFICATION_LIFECYCLE } from '../../services/organizations/verification-lifecycle.ts';
import { recordOutcome, SIGN_IN_LINK_LIFECYCLE, SIGN_IN_MAIL_OUTCOMES } from '../../services/pay/portal/sign-in-link-lifecycle.ts';
import { CHECKOUT_LIFECYCLE, isCheckoutFinal } from '../../services/payments/checkout-lifecycle.ts';
import { initialReminderDelivery, REMINDER_DELIVERY_LIFECYCLE } from '../../services/reminders/reminder-delivery-lifecycle.ts';
import { initialReminderStatus, REMINDER_LIFECYCLE } from '../../services/reminders/reminder-lifecycle.ts';
import type { Lifecycle, TransitionDef } from '../../services/shared/lifecycle.ts';
import { START_LINK_LIFECYCLE } from '../../services/start-links/start-link-lifecycle.ts';
import { afterAttempt, isAttemptable, WEBHOOK_DELIVERY_LIFECYCLE } from '../../services/webhooks/webhook-delivery-lifecycle.ts';

/** For each state, the transitions that may start from it and where they lead: `transition → state`. */
function movesOf<S extends string>(l: Lifecycle<S, Record<string, TransitionDef<S>>, unknown>): Record<string, string[]> {
  return Object.fromEntries(
    l.states.map((s) => [s, Object.keys(l.transitions).flatMap((t) => (l.can(s, t) ? [`${t} → ${l.transitions[t]!.to}`] : []))]),
  );
}

/** The lifecycles of the status columns beside the invoice, case, subscription and flow, each as its table of moves. */
describe('status lifecycles', () => {
  it('invoice send: queued moves once; a failure may be retried', () => {
    assert.deepEqual(movesOf(INVOICE_SEND_LIFECYCLE), {
      queued: ['send → sent', 'deliver → delivered', 'fail → failed'],
      sent: [],
      delivered: [],
      failed: ['retry → queued'],
    });
  });

  it('webhook delivery: attempts from queued or failed, replays from failed or given-up', () => {
    assert.deepEqual(movesOf(WEBHOOK_DELIVERY_LIFECYCLE), {
      queued: ['succeed → delivered', 'fail → failed', 'giveUp → given-up'],
      delivered: [],
      failed: ['succeed → delivered', 'fail → failed', 'giveUp → given-up', 'replay → queued'],
      'given-up': ['replay → queued'],
    });
    assert.deepEqual([afterAttempt(true, true), afterAttempt(false, true), afterAttempt(false, false)], ['delivered', 'failed', 'given-up']);
    assert.deepEqual(WEBHOOK_DELIVERY_LIFECYCLE.states.filter(isAttemptable), ['queued', 'failed']);
  });

  it('checkout: only forward, succeeded is final', () => {
    assert.deepEqual(movesOf(CHECKOUT_LIFECYCLE), {
      open: ['fail → failed', 'succeed → succeeded'],
      failed: ['fail → failed', 'succeed → succeeded'],
      succeeded: [],
    });
    assert.deepEqual(CHECKOUT_LIFECYCLE.states.filter(isCheckoutFinal), ['succeeded']);
  });

  it("reminder: sent, or failed without a channel; its delivery pending until done or given up", () => {
    assert.deepEqual(movesOf(REMINDER_LIFECYCLE), { sent: ['fail → failed'], failed: [] });
    assert.deepEqual([initialReminderStatus(true), initialReminderStatus(false)], ['sent', 'failed']);
    assert.deepEqual(movesOf(REMINDER_DELIVERY_LIFECYCLE), { pending: ['deliver → done', 'giveUp → none'], done: [], none: [] });
    assert.deepEqual([initialReminderDelivery(true), initialReminderDelivery(false)], ['pending', 'none']);
  });

  it("organisation verification: pending while a session is open, verified for good", () => {
    assert.deepEqual(movesOf(VERIFICATION_LIFECYCLE), {
      unverified: ['request → pending', 'verify → verified'],
      pending: ['verify → verified', 'abandon → unverified'],
      verified: [],
    });
  });

  it('payment domain and portal custom domain: the same verification, set or cleared, checked again and again', () => {
    const moves = {
      none: ['set → unverified'],
      unverified: ['set → unverified', 'clear → none', 'verify → verified', 'fail → failed'],
      verified: ['set → unverified', 'clear → none', 'verify → verified', 'fail → failed'],
      failed: ['set → unverified', 'clear → none', 'verify → verified', 'fail → failed'],
    };
    assert.deepEqual(movesOf(PAYMENT_DOMAIN_LIFECYCLE), moves);
    assert.deepEqual(movesOf(CUSTOM_DOMAIN_LIFECYCLE), moves);
  });

  it("portal sign-in mail: one final outcome, recorded over none", () => {
    for (const outcome of SIGN_IN_MAIL_OUTCOMES) {
      const t = SIGN_IN_LINK_LIFECYCLE.transitions[recordOutcome(outcome)];
      assert.deepEqual([t.to, t.from, t.fromUnset], [outcome, [], true]);
    }
  });

  it('start link session: open ends once, as completed, abandoned or expired', () => {
    assert.deepEqual(movesOf(START_LINK_LIFECYCLE), {
      open: ['complete → completed', 'abandon → abandoned', 'expire → expired'],
      completed: [],
      abandoned: [],
      expired: [],
    });
  });
});
