import assert from 'node:assert/strict';
import { fikCheckDigit, fikLine, fikOf, fikPaymentId, isFikPaymentId } from '../../services/payments/fik-payment-id.ts';

/** FI-kort +71 payment ids: the modulus-10 check digit from tables, and every generated id checked. */
describe('FI-kort payment ids', () => {
  // Each row's hand sum: from the rightmost digit, weights 2, 1, 2, 1, …; a two-digit product adds its digits.
  const table: [payload: string, check: number, handSum: string][] = [
    ['00000006709753', 5, 'the published example: 3·2=6, 5, 7·2=14→5, 9, 0, 7, 6·2=12→3: 35 → 5'],
    ['00000000000001', 8, '1·2=2: 2 → 8'],
    ['00000000000005', 9, '5·2=10→1: 1 → 9'],
    ['00000000000009', 1, '9·2=18→9: 9 → 1'],
    ['00000000000010', 9, '0·2, 1·1: 1 → 9'],
    ['00000000000000', 0, 'nothing: 0 → 0'],
    ['12345678901234', 7, '8+3+4+1+0+9+7+7+3+5+8+3+4+1 = 63 → 7'],
  ];
  for (const [payload, check, handSum] of table) {
    it(`${payload} → ${check} (${handSum})`, () => assert.equal(fikCheckDigit(payload), check));
  }

  it('builds the payment id of an invoice number: left-padded to 14 digits, then the check digit', () => {
    assert.equal(fikPaymentId(6_709_753), '000000067097535');
    assert.equal(fikPaymentId(1), '000000000000018');
    assert.equal(fikPaymentId(99_999_999_999_999), '999999999999994');
    for (const bad of [0, -1, 1.5, 1e14]) assert.throws(() => fikPaymentId(bad), RangeError);
  });

  it('every generated id passes the check, and every one-digit change fails it', () => {
    // A deterministic walk over invoice numbers of every length (a linear congruential sequence).
    let seed = 42;
    for (let n = 0; n < 2000; n++) {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      const number = 1 + (seed % 10 ** (1 + (n % 14)));
      const id = fikPaymentId(number);
      assert.match(id, /^[0-9]{15}$/);
      assert.ok(isFikPaymentId(id), id);
      const position = seed % 15;
      const digit = Number(id[position]);
      for (let other = 0; other <= 9; other++) {
        if (other === digit) continue;
        const changed = id.slice(0, position) + String(other) + id.slice(position + 1);
        assert.equal(isFikPaymentId(changed), false, `${id} with ${other} at ${position}`);
      }
    }
  });

  it('refuses what is not 15 digits', () => {
    for (const bad of ['00000006709753', '0000000670975350', '00000006709753a', '']) assert.equal(isFikPaymentId(bad), false, bad);
  });

  it('prints the +71 line, and the invoice shows its fik object or null', () => {
    assert.equal(fikLine('000000067097535', '85799665'), '+71<000000067097535+85799665<');
    assert.deepEqual(fikOf({ fik_payment_id: '000000067097535', fik_creditor_number: '85799665' }), {
      type: '71',
      paymentId: '000000067097535',
      creditorNumber: '85799665',
      line: '+71<000000067097535+85799665<',
    });
    assert.equal(fikOf({ fik_payment_id: null, fik_creditor_number: null }), null);
  });
});
