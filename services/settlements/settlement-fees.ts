/**
 * The `test` provider's payout arithmetic (docs/api-conventions.md, "Settlements"): pure, no I/O.
 *
 * Fees per payment: card 1.45 % + 100 øre, wallet (MobilePay) 1 %, each rounded half away from zero to whole øre in
 * exact integer arithmetic. Business days are Monday to Friday (no holiday calendar). Each business day's payments
 * are paid out on the next business day; a payment on a Saturday or Sunday belongs to the following Monday.
 */
export type SettledSource = 'card' | 'mobilepay';

/** Fee rates in hundredths of a basis point (1/1,000,000) plus a fixed part in øre. */
const FEES: Record<SettledSource, { ppm: bigint; fixedOere: bigint }> = {
  card: { ppm: 14_500n, fixedOere: 100n },
  mobilepay: { ppm: 10_000n, fixedOere: 0n },
};

/** round(n / d) half away from zero, for d > 0. */
export function divRoundHalfAway(n: bigint, d: bigint): bigint {
  const q = (2n * (n < 0n ? -n : n) + d) / (2n * d);
  return n < 0n ? -q : q;
}

/** The fee of one payment of `amountOere` (a positive integer) from `source`. */
export function paymentFee(source: SettledSource, amountOere: number): number {
  if (!Number.isSafeInteger(amountOere) || amountOere <= 0) throw new RangeError(`amount must be a positive safe integer, got ${amountOere}`);
  const { ppm, fixedOere } = FEES[source];
  return Number(divRoundHalfAway(BigInt(amountOere) * ppm, 1_000_000n) + fixedOere);
}

const dayOfWeek = (date: string): number => new Date(`${date}T00:00:00Z`).getUTCDay();

const shift = (date: string, days: number): string => {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
};

export const isBusinessDay = (date: string): boolean => {
  const dow = dayOfWeek(date);
  return dow >= 1 && dow <= 5;
};

/** The first business day after `date`. */
export function nextBusinessDay(date: string): string {
  let d = shift(date, 1);
  while (!isBusinessDay(d)) d = shift(d, 1);
  return d;
}

/** The business day a payment on `date` is settled with: the date itself, or the next business day after a weekend. */
export function settlementDay(date: string): string {
  let d = date;
  while (!isBusinessDay(d)) d = shift(d, 1);
  return d;
}

/** The period a business day's settlement covers: from the day after the previous business day, through the day. */
export function settlementPeriod(businessDay: string): { periodStart: string; periodEnd: string } {
  let start = businessDay;
  while (!isBusinessDay(shift(start, -1))) start = shift(start, -1);
  return { periodStart: start, periodEnd: businessDay };
}

export interface SettledPayment {
  source: SettledSource;
  amountOere: number;
  paymentDate: string;
}

export interface SettlementFigures {
  payoutDate: string;
  periodStart: string;
  periodEnd: string;
  grossOere: number;
  feeOere: number;
  netOere: number;
  paymentCount: number;
}

/** Groups payments into settlements, newest payout first. */
export function settle(payments: readonly SettledPayment[]): SettlementFigures[] {
  const byDay = new Map<string, SettlementFigures>();
  for (const p of payments) {
    const day = settlementDay(p.paymentDate);
    let s = byDay.get(day);
    if (!s) {
      s = { payoutDate: nextBusinessDay(day), ...settlementPeriod(day), grossOere: 0, feeOere: 0, netOere: 0, paymentCount: 0 };
      byDay.set(day, s);
    }
    const fee = paymentFee(p.source, p.amountOere);
    s.grossOere += p.amountOere;
    s.feeOere += fee;
    s.netOere += p.amountOere - fee;
    s.paymentCount += 1;
  }
  return [...byDay.values()].sort((a, b) => (a.payoutDate < b.payoutDate ? 1 : a.payoutDate > b.payoutDate ? -1 : 0));
}

export type SettlementStatus = 'pending' | 'held' | 'paid';

/** Held while the organisation is not verified; otherwise pending before the payout date and paid from it on. */
export function settlementStatus(payoutDate: string, today: string, verified: boolean): SettlementStatus {
  if (!verified) return 'held';
  return payoutDate <= today ? 'paid' : 'pending';
}
