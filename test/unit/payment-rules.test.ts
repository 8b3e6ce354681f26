import assert from 'node:assert/strict';
import { settlePayment } from '../../services/payments/payment-outcome.ts';
import { daysBetween, isPastDue } from '../../services/customers/balance-queries.ts';

describe('payment outcome (docs/api-conventions.md, Payments and balances)', () => {
  const table: [balanceBefore: number, amount: number, outcome: string, balanceAfter: number, surplus: number, settles: boolean][] = [
    [10_000, 1, 'partial', 9_999, 0, false],
    [10_000, 9_999, 'partial', 1, 0, false],
    [10_000, 10_000, 'paid_in_full', 0, 0, true],
    [10_000, 10_001, 'registered', -1, 1, true],
    [10_000, 25_000, 'registered', -15_000, 15_000, true],
    // Already settled: by payments (0), by a credit note (0), or overpaid before (< 0). The whole amount is credit.
    [0, 500, 'registered', -500, 500, false],
    [-2_000, 500, 'registered', -2_500, 500, false],
    [Number.MAX_SAFE_INTEGER, 100_000_000_000, 'partial', Number.MAX_SAFE_INTEGER - 100_000_000_000, 0, false],
  ];
  for (const [before, amount, outcome, after, surplus, settles] of table) {
    it(`balance ${before}, payment ${amount} → ${outcome}, balance ${after}, surplus ${surplus}`, () => {
      assert.deepEqual(settlePayment(before, amount), { outcome, balanceAfterOere: after, surplusOere: surplus, settles });
    });
  }

  it('refuses amounts that are not whole positive øre', () => {
    for (const [before, amount] of [[100, 0], [100, -5], [100, 1.5], [0.5, 1], [100, Number.MAX_SAFE_INTEGER + 2]]) {
      assert.throws(() => settlePayment(before!, amount!), RangeError, `${before} ${amount}`);
    }
  });
});

describe('customer balance rules', () => {
  it('counts whole calendar days, across months, leap days and the DST change', () => {
    assert.equal(daysBetween('2026-01-15', '2026-02-20'), 36);
    assert.equal(daysBetween('2028-02-28', '2028-03-01'), 2);
    assert.equal(daysBetween('2026-03-28', '2026-03-30'), 2);
    assert.equal(daysBetween('2026-02-20', '2026-02-20'), 0);
    assert.equal(daysBetween('2026-02-21', '2026-02-20'), -1);
  });

  it('is past due only when both thresholds are reached, with something overdue', () => {
    const t = { amountOere: 10_000, days: 14 };
    const table: [overdueOere: number, overdueCount: number, daysOverdue: number, expected: boolean][] = [
      [10_000, 1, 14, true],
      [9_999, 1, 40, false],
      [50_000, 3, 13, false],
      [0, 0, 0, false],
    ];
    for (const [overdueOere, overdueCount, daysOverdue, expected] of table) {
      assert.equal(isPastDue({ overdueOere, overdueCount, daysOverdue }, t), expected, `${overdueOere} ${overdueCount} ${daysOverdue}`);
    }
    // Thresholds of 0 do not make a customer who owes nothing overdue past due.
    assert.equal(isPastDue({ overdueOere: 0, overdueCount: 0, daysOverdue: 0 }, { amountOere: 0, days: 0 }), false);
    assert.equal(isPastDue({ overdueOere: 1, overdueCount: 1, daysOverdue: 1 }, { amountOere: 0, days: 0 }), true);
  });
});
