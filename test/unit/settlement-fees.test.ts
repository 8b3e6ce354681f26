import assert from 'node:assert/strict';
import {
  divRoundHalfAway, nextBusinessDay, paymentFee, settle, settlementDay, settlementPeriod, settlementStatus, type SettledSource,
} from '../../services/settlements/settlement-fees.ts';

describe('settlement fees and business days (pure)', () => {
  const fees: [SettledSource, number, number, string][] = [
    ['card', 10_000, 245, '1.45 % of 100 kr = 145 + 100'],
    ['card', 1, 100, '0.0145 rounds to 0'],
    ['card', 34, 100, '0.493 rounds down'],
    ['card', 35, 101, '0.5075 rounds up'],
    ['card', 100, 101, '1.45 rounds to 1'],
    ['card', 1_000, 115, '14.5: exactly half, away from zero'],
    ['card', 3_000, 144, '43.5: half away from zero'],
    ['card', 100_000_000_000, 1_450_000_100, 'the largest manual amount'],
    ['mobilepay', 10_000, 100, '1 %'],
    ['mobilepay', 49, 0, '0.49 rounds down'],
    ['mobilepay', 50, 1, '0.5: half away from zero'],
    ['mobilepay', 150, 2, '1.5: half away from zero'],
    ['mobilepay', 249, 2, '2.49'],
    ['mobilepay', 1, 0, 'one øre'],
  ];
  for (const [source, amount, fee, why] of fees) {
    it(`${source} ${amount} øre → fee ${fee} (${why})`, () => assert.equal(paymentFee(source, amount), fee));
  }

  it('refuses amounts that are not positive safe integers', () => {
    for (const bad of [0, -1, 1.5, Number.MAX_SAFE_INTEGER + 1]) assert.throws(() => paymentFee('card', bad), RangeError);
  });

  it('rounds half away from zero on both sides', () => {
    const cases: [bigint, bigint, bigint][] = [[5n, 10n, 1n], [-5n, 10n, -1n], [4n, 10n, 0n], [-4n, 10n, 0n], [15n, 10n, 2n], [-15n, 10n, -2n], [0n, 3n, 0n]];
    for (const [n, d, q] of cases) assert.equal(divRoundHalfAway(n, d), q, `${n}/${d}`);
  });

  it('business days are Monday to Friday', () => {
    const table: [string, string, string, string][] = [
      // date (weekday), settled with, payout, why
      ['2026-03-02', '2026-03-02', '2026-03-03', 'Monday → Tuesday'],
      ['2026-03-05', '2026-03-05', '2026-03-06', 'Thursday → Friday'],
      ['2026-03-06', '2026-03-06', '2026-03-09', 'Friday → Monday'],
      ['2026-03-07', '2026-03-09', '2026-03-10', 'Saturday belongs to Monday, paid Tuesday'],
      ['2026-03-08', '2026-03-09', '2026-03-10', 'Sunday belongs to Monday'],
      ['2026-12-31', '2026-12-31', '2027-01-01', 'no holiday calendar: New Year\'s Day is a Friday business day'],
    ];
    for (const [date, day, payout, why] of table) {
      assert.equal(settlementDay(date), day, why);
      assert.equal(nextBusinessDay(settlementDay(date)), payout, why);
    }
    assert.deepEqual(settlementPeriod('2026-03-09'), { periodStart: '2026-03-07', periodEnd: '2026-03-09' });
    assert.deepEqual(settlementPeriod('2026-03-10'), { periodStart: '2026-03-10', periodEnd: '2026-03-10' });
  });

  it('groups a business day\'s payments, rounds per payment, newest payout first', () => {
    const out = settle([
      { source: 'card', amountOere: 1_000, paymentDate: '2026-03-06' },
      { source: 'card', amountOere: 1_000, paymentDate: '2026-03-06' },
      { source: 'mobilepay', amountOere: 150, paymentDate: '2026-03-07' },
      { source: 'card', amountOere: 10_000, paymentDate: '2026-03-09' },
    ]);
    assert.deepEqual(out, [
      { payoutDate: '2026-03-10', periodStart: '2026-03-07', periodEnd: '2026-03-09', grossOere: 10_150, feeOere: 247, netOere: 9_903, paymentCount: 2 },
      // 2 × 14.5 rounded per payment: 2 × 15 + 2 × 100 (never 29 + 200).
      { payoutDate: '2026-03-09', periodStart: '2026-03-06', periodEnd: '2026-03-06', grossOere: 2_000, feeOere: 230, netOere: 1_770, paymentCount: 2 },
    ]);
  });

  it('status: held unless verified; pending before the payout date, paid from it', () => {
    assert.equal(settlementStatus('2026-03-10', '2026-03-09', false), 'held');
    assert.equal(settlementStatus('2026-03-01', '2026-03-09', false), 'held');
    assert.equal(settlementStatus('2026-03-10', '2026-03-09', true), 'pending');
    assert.equal(settlementStatus('2026-03-10', '2026-03-10', true), 'paid');
    assert.equal(settlementStatus('2026-03-10', '2026-03-11', true), 'paid');
  });
});
