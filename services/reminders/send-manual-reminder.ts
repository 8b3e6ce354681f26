import type { ReminderSent } from '../../contracts/reminder-history.ts';
import type { Queryable } from '../shared/db.ts';
import { DomainError, notFound } from '../shared/errors.ts';
import { rowBalanceOere } from '../invoices/invoice-balance.ts';
import { INVOICE_STATUS, isIssued } from '../invoices/invoice-lifecycle.ts';
import { MAX_NUMBERED_REMINDERS } from '../law/danish-law.ts';
import { planReminderCount, stepRule } from './reminder-policy.ts';
import { chooseChannel } from './choose-reminder-channel.ts';
import { loadDunningContext } from './dunning-context.ts';
import { lockCustomerDunning } from './lock-customer-dunning.ts';
import { scheduleDunning } from './schedule-dunning.ts';
import { takeReminder } from './take-reminder.ts';
import { PAYMENT_PLAN_STATUS } from '../payment-plans/payment-plan-lifecycle.ts';

/**
 * `POST /v1/invoices/{id}/reminders`: sends the next numbered reminder now, in the caller's transaction with the
 * invoice's row locked, exactly as the engine takes one (take-reminder.ts): the same numbering, fee rule and
 * channel rule, so a manual and an automatic reminder racing for one invoice yield one reminder per number. The
 * engine's plan moves on with it. The document and the mail follow after commit (the invoice's Dunning object is
 * poked; its wake-index row is due now, so a lost poke only delays them).
 */
export async function sendManualReminder(sql: Queryable, organizationId: string, invoiceId: string): Promise<ReminderSent> {
  await lockCustomerDunning(sql, organizationId, invoiceId);
  const ctx = await loadDunningContext(sql, organizationId, invoiceId);
  if (!ctx) throw notFound('invoice_not_found', 'invoice');
  const inv = ctx.invoice;
  const notEligible = (why: string) => new DomainError('reminder_not_eligible', why);
  // A credit note is readable at /v1/invoices/{id} like any invoice, but there is nothing to remind on it.
  if (inv.type !== 'invoice') throw notEligible('A credit note is never reminded.');
  if (!isIssued(inv.status)) throw notEligible('Only an issued invoice can be reminded.');
  if (inv.status === INVOICE_STATUS.collections) throw notEligible('The invoice has been handed over to debt collection.');
  if (rowBalanceOere(inv) <= 0 || inv.status === INVOICE_STATUS.paid) throw notEligible('The invoice has nothing left to pay.');
  // The debtor is paying by an agreed plan: no reminder while it is active (it is cancelled, or breaks, first).
  if (ctx.paymentPlan?.status === PAYMENT_PLAN_STATUS.active) {
    throw new DomainError('payment_plan_active', 'The invoice has an active payment plan; no reminder is sent while it lasts.');
  }
  if (inv.due_date === null || inv.due_date >= ctx.today) throw notEligible(`The invoice is not past due: its due date is ${inv.due_date}.`);
  if (ctx.facts.principalOutstandingOere <= 0) throw notEligible('Only reminder fees are outstanding; they are not reminded.');
  const numbered = ctx.facts.taken.filter((t) => t.type === 'reminder');
  if (numbered.length >= MAX_NUMBERED_REMINDERS) {
    throw new DomainError('reminder_limit_reached', `The invoice has had ${MAX_NUMBERED_REMINDERS} reminders, the most it may have.`);
  }
  const reminderNumber = numbered.length === 0 ? 1 : Math.max(...numbered.map((t) => t.reminderNumber ?? 0)) + 1;
  const rule = stepRule(ctx.plan, { type: 'reminder', reminderNumber });
  const channel = chooseChannel(ctx, rule.channel);
  if (channel.channel === null) {
    throw channel.failureCode === 'customer_email_missing'
      ? new DomainError(
          'customer_email_missing',
          ctx.pinnedFlow
            ? "The customer has no e-mail address, and the invoice's reminder flow sends this reminder by e-mail only."
            : 'The customer has no e-mail address, and letter fallback is off in the reminder settings.',
        )
      : new DomainError(
          'customer_address_missing',
          rule.channel === 'letter'
            ? "The customer has no complete postal address (street, postal code, city) for the letter the invoice's reminder flow sends."
            : 'The customer has no e-mail address and no complete postal address (street, postal code, city) for a letter.',
        );
  }
  const taken = await takeReminder(sql, ctx, {
    type: 'reminder',
    reminderNumber,
    sentOn: ctx.today,
    demandLetter: reminderNumber === planReminderCount(ctx.plan),
    source: 'manual',
  });
  // Due now: the engine renders and delivers it, then plans the next step from it.
  await scheduleDunning(sql, organizationId, invoiceId, ctx.today);
  return { reminderNumber, feeOere: taken.feeOere, collectionsReady: taken.collectionsReady };
}
