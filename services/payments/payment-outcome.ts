import type { PaymentOutcome } from '../../contracts/payments.ts';

export interface Settlement {
  outcome: PaymentOutcome;
  balanceAfterOere: number;
  /** The part of the payment beyond the balance it met, which the customer now holds as credit. */
  surplusOere: number;
  /** The payment brought a positive balance to 0 or below: the invoice becomes `paid`. */
  settles: boolean;
}

/**
 * What a payment of `amountOere` does to an invoice whose balance is `balanceBeforeOere` (docs/api-conventions.md,
 * "Payments and balances"): `partial` while a balance remains, `paid_in_full` when it is exactly 0, `registered` when
 * the invoice was settled already (balance ≤ 0: paid, or credited) or the payment goes beyond the balance. Nothing is
 * lost: the whole amount counts as paid, and what exceeds the balance shows as the customer's credit.
 */
export function settlePayment(balanceBeforeOere: number, amountOere: number): Settlement {
  if (!Number.isSafeInteger(balanceBeforeOere) || !Number.isSafeInteger(amountOere) || amountOere < 1) {
    throw new RangeError(`settlePayment needs whole øre and a positive amount, got ${balanceBeforeOere} and ${amountOere}`);
  }
  const balanceAfterOere = balanceBeforeOere - amountOere;
  if (balanceBeforeOere <= 0) return { outcome: 'registered', balanceAfterOere, surplusOere: amountOere, settles: false };
  if (balanceAfterOere > 0) return { outcome: 'partial', balanceAfterOere, surplusOere: 0, settles: false };
  if (balanceAfterOere === 0) return { outcome: 'paid_in_full', balanceAfterOere, surplusOere: 0, settles: true };
  return { outcome: 'registered', balanceAfterOere, surplusOere: -balanceAfterOere, settles: true };
}
