import assert from 'node:assert/strict';
import { computeTotals, decimalText, divRound, largestLineNet, type LineInput } from '../../services/invoices/invoice-totals.ts';
import { DomainError } from '../../services/shared/errors.ts';

const line = (l: Partial<LineInput>): LineInput => ({ quantity: 1, unitPriceOere: 10000, vatRateBps: 2500, ...l });

describe('invoice totals', () => {
  describe('rounding half away from zero', () => {
    const cases: [bigint, bigint, bigint][] = [
      [5n, 10n, 1n], [4n, 10n, 0n], [15n, 10n, 2n], [25n, 10n, 3n], [-5n, 10n, -1n], [-15n, 10n, -2n], [-4n, 10n, 0n], [0n, 7n, 0n],
    ];
    for (const [n, d, want] of cases) it(`${n}/${d} → ${want}`, () => assert.equal(divRound(n, d), want));
  });

  describe('exact decimal text of quantities', () => {
    const cases: [number, string][] = [[1, '1'], [1.5, '1.5'], [0.1, '0.1'], [1e-7, '0.0000001'], [1.25e-7, '0.000000125'], [999999, '999999'], [0.333, '0.333']];
    for (const [n, want] of cases) it(`${n} → ${want}`, () => assert.equal(decimalText(n), want));
  });

  describe('line amounts', () => {
    const cases: [string, Partial<LineInput>, { net: number; vat: number; discount: number }][] = [
      ['whole quantity', { quantity: 3, unitPriceOere: 12345 }, { net: 37035, vat: 9259, discount: 0 }],
      ['decimal quantity rounds half up', { quantity: 1.5, unitPriceOere: 333 }, { net: 500, vat: 125, discount: 0 }],
      ['decimal quantity rounds down', { quantity: 0.333, unitPriceOere: 100 }, { net: 33, vat: 8, discount: 0 }],
      ['tiny quantity', { quantity: 0.001, unitPriceOere: 499 }, { net: 0, vat: 0, discount: 0 }],
      ['tiny quantity rounding up', { quantity: 0.001, unitPriceOere: 500 }, { net: 1, vat: 0, discount: 0 }],
      ['percent discount', { quantity: 2, unitPriceOere: 10000, discount: { type: 'percent', value: 15 } }, { net: 17000, vat: 4250, discount: 3000 }],
      ['percent discount rounds', { quantity: 1, unitPriceOere: 999, discount: { type: 'percent', value: 50 } }, { net: 499, vat: 125, discount: 500 }],
      ['100 % discount', { discount: { type: 'percent', value: 100 } }, { net: 0, vat: 0, discount: 10000 }],
      ['amount discount', { quantity: 2, unitPriceOere: 10000, discount: { type: 'amount', value: 2500 } }, { net: 17500, vat: 4375, discount: 2500 }],
      ['amount discount equal to the line', { quantity: 2, unitPriceOere: 10000, discount: { type: 'amount', value: 20000 } }, { net: 0, vat: 0, discount: 20000 }],
      ['zero price', { unitPriceOere: 0 }, { net: 0, vat: 0, discount: 0 }],
      ['exempt line', { vatRateBps: 0, vatExemptionReason: 'ML13' }, { net: 10000, vat: 0, discount: 0 }],
      ['12.5 % rate', { vatRateBps: 1250, unitPriceOere: 101 }, { net: 101, vat: 13, discount: 0 }],
      ['100 % rate', { vatRateBps: 10000, unitPriceOere: 101 }, { net: 101, vat: 101, discount: 0 }],
    ];
    for (const [what, l, want] of cases) {
      it(what, () => {
        const t = computeTotals([line(l)]);
        assert.deepEqual(
          { net: t.lines[0]!.netOere, vat: t.lines[0]!.vatOere, discount: t.lines[0]!.discountOere },
          want,
        );
        assert.equal(t.lines[0]!.grossOere, want.net + want.vat);
      });
    }
  });

  it('computes VAT per rate over summed nets, not per line (BR-CO-17)', () => {
    // Three lines of 0.02 kr at 25 %: per line VAT rounds to 1 øre each (0.5 → 1), per rate 6 × 25 % = 1.5 → 2.
    const t = computeTotals([line({ unitPriceOere: 2 }), line({ unitPriceOere: 2 }), line({ unitPriceOere: 2 })]);
    assert.deepEqual(t.lines.map((l) => l.vatOere), [1, 1, 1]);
    assert.equal(t.vatOere, 2);
    assert.deepEqual(t.vatSummary, [{ vatRateBps: 2500, netOere: 6, vatOere: 2 }]);
    assert.equal(t.grossOere, 8);
  });

  it('keeps one VAT row per rate, highest first, and exempt lines apart by reason', () => {
    const t = computeTotals([
      line({ unitPriceOere: 10000, vatRateBps: 2500 }),
      line({ unitPriceOere: 5000, vatRateBps: 0, vatExemptionReason: 'ML13' }),
      line({ unitPriceOere: 2000, vatRateBps: 1250 }),
      line({ unitPriceOere: 3000, vatRateBps: 2500 }),
      line({ unitPriceOere: 700, vatRateBps: 0, vatExemptionReason: 'EKSPORT' }),
      line({ unitPriceOere: 300, vatRateBps: 0, vatExemptionReason: 'ML13' }),
    ]);
    assert.deepEqual(t.vatSummary, [
      { vatRateBps: 2500, netOere: 13000, vatOere: 3250 },
      { vatRateBps: 1250, netOere: 2000, vatOere: 250 },
    ]);
    assert.deepEqual(t.exemptSummary, [{ reason: 'ML13', netOere: 5300 }, { reason: 'EKSPORT', netOere: 700 }]);
    assert.deepEqual([t.netOere, t.vatOere, t.grossOere], [21000, 3500, 24500]);
  });

  it('defaults a line without vatRateBps to the standard 25 %', () => {
    assert.equal(computeTotals([{ quantity: 1, unitPriceOere: 100 }]).vatOere, 25);
  });

  it('computes at the largest bounds without losing precision, or refuses with amount_out_of_range', () => {
    // 999999 × 100 000 000 000 = 9.99999e16 > 2^53: exact in BigInt, too large for the API's integers.
    assert.throws(
      () => computeTotals([line({ quantity: 999999, unitPriceOere: 100_000_000_000 })]),
      (e: unknown) => e instanceof DomainError && e.code === 'amount_out_of_range' && e.status === 422,
    );
    // Just below the limit, the figures are exact.
    const t = computeTotals([line({ quantity: 72057, unitPriceOere: 100_000_000_000, vatRateBps: 0, vatExemptionReason: 'EKSPORT' })]);
    assert.equal(t.netOere, 7_205_700_000_000_000);
    const odd = computeTotals([line({ quantity: 0.123456, unitPriceOere: 99_999_999_999, vatRateBps: 2500 })]);
    // 0.123456 × 99 999 999 999 = 12 345 599 999.876544 exactly (a float product would be off in the last places).
    assert.equal(odd.netOere, 12_345_600_000);
  });

  it('reports a line whose product overflows at the line, with the limit of its product at its VAT rate', () => {
    const refusal = (l: Partial<LineInput>) => {
      try {
        computeTotals([line({}), line(l)]);
      } catch (e) {
        assert.ok(e instanceof DomainError && e.code === 'amount_out_of_range', String(e));
        return e.details;
      }
      assert.fail('not refused');
    };
    // 25 %: 7 205 759 403 792 793 øre plus its VAT is exactly 2^53 − 1; one øre more is refused.
    assert.equal(largestLineNet(2500), 7_205_759_403_792_793n);
    assert.equal(computeTotals([line({ quantity: 7_205_759_403_792_793, unitPriceOere: 1 })]).grossOere, Number.MAX_SAFE_INTEGER);
    assert.deepEqual(refusal({ quantity: 7_205_759_403_792_794, unitPriceOere: 1 }), [{
      path: '/lines/1',
      message: 'quantity × unitPriceOere must be at most 7205759403792793 øre: with 25 % VAT the line then comes to at most 9007199254740991 øre',
    }]);
    assert.deepEqual(refusal({ quantity: 999999, unitPriceOere: 100_000_000_000, vatRateBps: 0, vatExemptionReason: 'EKSPORT', discount: { type: 'amount', value: 5 } }), [{
      path: '/lines/1',
      message: 'quantity × unitPriceOere less the discount must be at most 9007199254740991 øre: with 0 % VAT the line then comes to at most 9007199254740991 øre',
    }]);
  });

  describe('422 business checks', () => {
    const cases: [string, Partial<LineInput>, string, string][] = [
      ['rate above 100 %', { vatRateBps: 10001 }, 'invalid_vat_rate', '/lines/0/vatRateBps'],
      ['negative rate', { vatRateBps: -1 }, 'invalid_vat_rate', '/lines/0/vatRateBps'],
      ['huge rate', { vatRateBps: Number.MAX_SAFE_INTEGER }, 'invalid_vat_rate', '/lines/0/vatRateBps'],
      ['0 % without reason', { vatRateBps: 0 }, 'vat_exemption_reason_required', '/lines/0/vatExemptionReason'],
      ['reason with 25 %', { vatExemptionReason: 'ML13' }, 'vat_exemption_reason_not_allowed', '/lines/0/vatExemptionReason'],
      ['percent over 100', { discount: { type: 'percent', value: 101 } }, 'invalid_discount', '/lines/0/discount/value'],
      ['amount over the line', { quantity: 1.5, unitPriceOere: 1000, discount: { type: 'amount', value: 1501 } }, 'invalid_discount', '/lines/0/discount/value'],
    ];
    for (const [what, l, code, path] of cases) {
      it(`${what} → ${code}`, () => {
        assert.throws(
          () => computeTotals([line({}), line(l)].slice(1)),
          (e: unknown) => e instanceof DomainError && e.code === code && e.status === 422 && e.details?.[0]?.path === path,
        );
      });
    }
    it('an amount discount of exactly quantity × price is allowed with a decimal quantity', () => {
      assert.equal(computeTotals([line({ quantity: 1.5, unitPriceOere: 1000, discount: { type: 'amount', value: 1500 } })]).netOere, 0);
    });
  });
});
