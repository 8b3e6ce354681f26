import assert from 'node:assert/strict';
import { amountInMinorUnits, CamtError, MAX_DEPTH, readCamt053 } from '../../services/bank-statements/read-camt053.ts';
import { camt053, VERSIONS, type EntryFixture } from '../helpers/camt053.ts';

const refusal = (xml: string): CamtError => {
  try {
    readCamt053(xml);
  } catch (err) {
    assert.ok(err instanceof CamtError, String(err));
    return err;
  }
  assert.fail('the document was read');
};

const MIXED: EntryFixture[] = [
  { amount: '1250.00', acctSvcrRef: 'BANK-1', txs: [{ ustrd: ['Faktura 1001'], ref: '+71<000000000010018+85799665<' }] },
  { amount: '99.95', direction: 'DBIT', acctSvcrRef: 'BANK-2', txs: [{ ustrd: ['Husleje'] }] },
  { amount: '10.00', currency: 'EUR', acctSvcrRef: 'BANK-3' },
  { amount: '500', ntryRef: 'NTRY-4', status: 'PDNG' },
  { amount: '75.5', txs: [{ ustrd: ['Linje 1', 'Linje 2'], addtlRmtInf: 'ekstra' }], addtlNtryInf: 'Overførsel' },
];

describe('readCamt053 (services/bank-statements/read-camt053.ts)', () => {
  for (const v of VERSIONS) {
    it(`reads camt.053.001.0${v}: entries, directions, statuses, currencies, references and identities`, () => {
      const doc = readCamt053(camt053(v, [{ id: `STMT-${v}`, entries: MIXED }]));
      assert.equal(doc.version, v);
      assert.equal(doc.accountId, 'DK5000400440116243');
      assert.deepEqual(doc.statementIds, [`STMT-${v}`]);
      assert.deepEqual([doc.from, doc.to], ['2026-11-01', '2026-11-30']);
      assert.deepEqual(
        doc.items.map((i) => [i.identity.slice(0, 2) === 'h:' ? 'hash' : i.identity, i.direction, i.booked, i.currency, i.amountMinor, i.bookingDate]),
        [
          ['a:BANK-1', 'CRDT', true, 'DKK', 125_000, '2026-11-02'],
          ['a:BANK-2', 'DBIT', true, 'DKK', 9_995, '2026-11-02'],
          ['a:BANK-3', 'CRDT', true, 'EUR', 1_000, '2026-11-02'],
          ['n:NTRY-4', 'CRDT', false, 'DKK', 50_000, '2026-11-02'],
          ['hash', 'CRDT', true, 'DKK', 7_550, '2026-11-02'],
        ],
      );
      assert.deepEqual(doc.items.map((i) => [i.reference, i.remittance]), [
        ['+71<000000000010018+85799665<', 'Faktura 1001'],
        [null, 'Husleje'],
        [null, null],
        [null, null],
        [null, 'Linje 1\nLinje 2'],
      ]);
      assert.deepEqual(doc.items[4]!.otherTexts, ['Overførsel', 'ekstra']);
    });

    it(`splits a batch entry of camt.053.001.0${v} into its transactions, each with its amount and remittance`, () => {
      const doc = readCamt053(camt053(v, [{
        id: 'B', entries: [{ amount: '300.00', acctSvcrRef: 'BATCH-1', txs: [{ amount: '100.00', ustrd: ['Faktura 7'] }, { amount: '200.00', ref: '000000000000075' }] }],
      }]));
      assert.deepEqual(doc.items.map((i) => [i.identity, i.amountMinor, i.reference, i.remittance]), [
        ['a:BATCH-1/1', 10_000, null, 'Faktura 7'],
        ['a:BATCH-1/2', 20_000, '000000000000075', null],
      ]);
    });
  }

  it('reads several statements in one document: their ids in order, the period over all of them', () => {
    const doc = readCamt053(camt053(5, [
      { id: 'S-1', from: '2026-11-01', to: '2026-11-01', entries: [{ amount: '1.00', acctSvcrRef: 'R1' }] },
      { id: 'S-2', from: '2026-11-02', to: '2026-11-02', entries: [{ amount: '2.00', acctSvcrRef: 'R2' }] },
    ]));
    assert.deepEqual(doc.statementIds, ['S-1', 'S-2']);
    assert.deepEqual([doc.from, doc.to], ['2026-11-01', '2026-11-02']);
    assert.deepEqual(doc.items.map((i) => [i.statementId, i.identity]), [['S-1', 'a:R1'], ['S-2', 'a:R2']]);
  });

  it('refuses statements of two accounts in one document', () => {
    const err = refusal(camt053(5, [{ id: 'S-1', entries: [] }, { id: 'S-2', iban: 'DK9520000123456789', entries: [] }]));
    assert.equal(err.path, '/BkToCstmrStmt/Stmt/1/Acct');
  });

  it('keeps a batch whose transactions lack amounts, or do not add up, as one entry', () => {
    for (const txs of [[{ ustrd: ['a'] }, { ustrd: ['b'] }], [{ amount: '1.00' }, { amount: '1.00' }]]) {
      const doc = readCamt053(camt053(8, [{ id: 'S', entries: [{ amount: '3.00', acctSvcrRef: 'X', txs }] }]));
      assert.deepEqual(doc.items.map((i) => [i.identity, i.amountMinor]), [['a:X', 300]]);
    }
  });

  it('gives the hash identity: the same for the same entry in another document, numbered within a statement', () => {
    const e: EntryFixture = { amount: '100.00', txs: [{ ustrd: ['Gave'] }] };
    const a = readCamt053(camt053(4, [{ id: 'A', entries: [e, e] }]));
    const b = readCamt053(camt053(6, [{ id: 'B', entries: [e] }]));
    assert.match(a.items[0]!.identity, /^h:[0-9a-f]{64}$/);
    assert.equal(a.items[1]!.identity, `${a.items[0]!.identity}#2`);
    assert.equal(b.items[0]!.identity, a.items[0]!.identity);
    const other = readCamt053(camt053(4, [{ id: 'C', entries: [{ ...e, amount: '100.01' }] }]));
    assert.notEqual(other.items[0]!.identity, a.items[0]!.identity);
  });

  it('reads amounts exactly, refusing a DKK amount with a third decimal', () => {
    assert.equal(amountInMinorUnits('0.01', 'DKK', ''), 1);
    assert.equal(amountInMinorUnits('123456789012.34', 'DKK', ''), 12_345_678_901_234);
    assert.equal(amountInMinorUnits('1.50000', 'DKK', ''), 150);
    assert.equal(amountInMinorUnits('1.005', 'EUR', ''), 101);
    assert.throws(() => amountInMinorUnits('1.001', 'DKK', '/x'), CamtError);
    for (const bad of ['-1.00', '1,00', '', '1e3', ' 1']) assert.throws(() => amountInMinorUnits(bad, 'DKK', ''), CamtError, bad);
    assert.throws(() => amountInMinorUnits('999999999999999999', 'DKK', ''), /too large/);
    const err = refusal(camt053(2, [{ id: 'S', entries: [{ amount: '1.234' }] }]));
    assert.equal(err.path, '/BkToCstmrStmt/Stmt/0/Ntry/0/Amt');
  });

  describe('hostile and foreign input', () => {
    it('refuses a billion-laughs document at its DOCTYPE, expanding nothing', () => {
      const lol = `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">${Array.from({ length: 9 }, (_, i) =>
        `<!ENTITY lol${i + 1} "${`&lol${i === 0 ? '' : i};`.repeat(10)}">`).join('')}]><Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02">&lol9;</Document>`;
      assert.match(refusal(lol).message, /DOCTYPE/);
    });

    it('refuses an external entity, reading no file', () => {
      const xxe = '<?xml version="1.0"?><!DOCTYPE d [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"><BkToCstmrStmt>&xxe;</BkToCstmrStmt></Document>';
      const err = refusal(xxe);
      assert.match(err.message, /DOCTYPE/);
      assert.doesNotMatch(err.message, /root:/);
      // Without a DOCTYPE the entity is unknown: an error, never a look-up.
      assert.match(refusal('<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02">&xxe;</Document>').message, /not well-formed/);
    });

    it(`refuses nesting deeper than ${MAX_DEPTH} elements`, () => {
      const deep = `<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02">${'<a>'.repeat(100_000)}${'</a>'.repeat(100_000)}</Document>`;
      assert.match(refusal(deep).message, /deeper than 64/);
      // 63 levels below the root are read (and then refused for what they are not).
      const ok = `<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02">${'<a>'.repeat(MAX_DEPTH - 1)}${'</a>'.repeat(MAX_DEPTH - 1)}</Document>`;
      assert.match(refusal(ok).message, /no BkToCstmrStmt/);
    });

    it('refuses text that is not XML, and malformed XML, saying where', () => {
      assert.match(refusal('{"statement": true}').message, /not well-formed/);
      assert.match(refusal('').message, /no root element|not well-formed/);
      const err = refusal('<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02">\n<BkToCstmrStmt></Document>');
      assert.match(err.message, /line 2/);
    });

    it('refuses another message: camt.054, pain.001, no namespace', () => {
      const camt054 = camt053(8, [{ id: 'S', entries: [] }]).replace('camt.053.001.08', 'camt.054.001.08').replace(/BkToCstmrStmt/g, 'BkToCstmrDbtCdtNtfctn');
      assert.match(refusal(camt054).message, /camt\.054\.001\.08 message, not a camt\.053/);
      const pain = '<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.001.001.09"><CstmrCdtTrfInitn/></Document>';
      assert.match(refusal(pain).message, /pain\.001\.001\.09 message/);
      assert.match(refusal('<Document><BkToCstmrStmt/></Document>').message, /namespace \(none\)/);
      assert.match(refusal(camt053(1 as 2, [{ id: 'S', entries: [] }])).message, /camt\.053\.001\.01 message/);
    });

    it('refuses a statement without entries status, account or id, pointing at the place', () => {
      const doc = camt053(7, [{ id: 'S', entries: [{ amount: '1.00' }] }]);
      assert.equal(refusal(doc.replace('<Sts>BOOK</Sts>', '')).path, '/BkToCstmrStmt/Stmt/0/Ntry/0/Sts');
      assert.equal(refusal(doc.replace(/<Acct>.*?<\/Acct>/, '')).path, '/BkToCstmrStmt/Stmt/0/Acct');
      assert.equal(refusal(doc.replace('<CdtDbtInd>CRDT</CdtDbtInd><Sts>', '<CdtDbtInd>BOTH</CdtDbtInd><Sts>')).path, '/BkToCstmrStmt/Stmt/0/Ntry/0/CdtDbtInd');
    });
  });
});
