import assert from 'node:assert/strict';
import { decideMatch, invoiceNumberCandidates, paymentIdCandidates, type EntryTexts } from '../../services/bank-statements/match-entry.ts';
import { fikPaymentId } from '../../services/payments/fik-payment-id.ts';

const P7 = fikPaymentId(7); // 000000000000075
const P1001 = fikPaymentId(1001);
const entry = (e: Partial<EntryTexts>): EntryTexts => ({ reference: null, remittance: null, otherTexts: [], ...e });

describe('bank entry matching rules (services/bank-statements/match-entry.ts)', () => {
  it('finds payment ids: bare, framed as +71<…+…<, in any text, only with a valid check digit, each once', () => {
    const cases: [Partial<EntryTexts>, string[]][] = [
      [{ reference: P7 }, [P7]],
      [{ reference: `+71<${P7}+85799665<` }, [P7]],
      [{ reference: `+71 < ${P7} + 85799665 <` }, [P7]],
      [{ reference: '000 000 000 000 075' }, [P7]],
      [{ reference: `71${P7}` }, [P7]],
      [{ remittance: `Betaling ${P1001} tak` }, [P1001]],
      [{ otherTexts: [`FIK +71<${P1001}+85799665<`] }, [P1001]],
      [{ reference: P7, remittance: `${P1001} ${P7}` }, [P7, P1001]],
      // 14 or 16 digits, a wrong check digit, digits glued to more digits: none.
      [{ remittance: '00000000000007' }, []],
      [{ remittance: `1${P7}` }, []],
      [{ remittance: '000000000000076' }, []],
      [{ reference: 'RF18539007547034' }, []],
    ];
    for (const [e, want] of cases) assert.deepEqual(paymentIdCandidates(entry(e)), want, JSON.stringify(e));
  });

  it('finds invoice numbers as whole words of the unstructured remittance only', () => {
    const cases: [string | null, number[]][] = [
      ['Faktura 1001', [1001]],
      ['Fakt.nr. 1001, kunde 55', [1001, 55]],
      ['1001-1002', [1001, 1002]],
      ['#0042', [42]],
      ['INV1001', []],
      ['1001kr', []],
      ['Fåktura1001', []],
      ['', []],
      [null, []],
      ['0', []],
    ];
    for (const [remittance, want] of cases) assert.deepEqual(invoiceNumberCandidates({ remittance }), want, String(remittance));
    assert.deepEqual(invoiceNumberCandidates({ remittance: null }), []);
  });

  it('decides in the rule order: payment id first, then one open invoice by number with the exact balance', () => {
    const byPaymentId = new Map([[P7, 'inv-7']]);
    const open = [{ id: 'inv-1001', number: 1001, balanceOere: 50_000 }, { id: 'inv-1002', number: 1002, balanceOere: 20_000 }];
    const openByNumber = new Map(open.map((i) => [i.number, [i]]));
    const cases: [Partial<EntryTexts>, number, ReturnType<typeof decideMatch>][] = [
      [{ reference: P7 }, 1, { invoiceId: 'inv-7', rule: 'payment_id' }],
      // The payment id wins over a number naming another invoice, whatever the amount.
      [{ reference: P7, remittance: 'Faktura 1001' }, 50_000, { invoiceId: 'inv-7', rule: 'payment_id' }],
      [{ remittance: 'Faktura 1001' }, 50_000, { invoiceId: 'inv-1001', rule: 'invoice_number' }],
      [{ remittance: 'Faktura 1001' }, 49_999, { invoiceId: null, rule: null, reason: 'amount_differs' }],
      [{ remittance: 'Faktura 1001 og 1002' }, 50_000, { invoiceId: null, rule: null, reason: 'ambiguous_number' }],
      // A number in the structured reference is not an invoice number.
      [{ reference: '1001' }, 50_000, { invoiceId: null, rule: null, reason: 'no_reference' }],
      [{ remittance: 'Faktura 9999' }, 50_000, { invoiceId: null, rule: null, reason: 'no_reference' }],
      // A payment id of no invoice of the organisation falls through to the number rule.
      [{ reference: P1001, remittance: 'Faktura 1002' }, 20_000, { invoiceId: 'inv-1002', rule: 'invoice_number' }],
    ];
    for (const [e, amountOere, want] of cases) assert.deepEqual(decideMatch({ ...entry(e), amountOere }, { byPaymentId, openByNumber }), want, JSON.stringify(e));
  });
});
