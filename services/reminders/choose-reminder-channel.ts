import type { DunningContext } from './dunning-context.ts';
import type { PlanChannel } from './reminder-policy.ts';

/**
 * The channel a reminder goes by under the step's channel rule, or why none: `email` needs an e-mail address,
 * `letter` a complete postal address, `email_or_letter` an e-mail address, else an address (the settings' rule is
 * `email_or_letter` with letter fallback on, `email` with it off).
 */
export function chooseChannel(
  ctx: Pick<DunningContext, 'customer'>,
  rule: PlanChannel,
): { channel: 'email' | 'letter' } | { channel: null; failureCode: 'customer_email_missing' | 'customer_address_missing' } {
  if (rule !== 'letter' && ctx.customer.hasEmail) return { channel: 'email' };
  if (rule === 'email') return { channel: null, failureCode: 'customer_email_missing' };
  if (!ctx.customer.hasAddress) return { channel: null, failureCode: 'customer_address_missing' };
  return { channel: 'letter' };
}
