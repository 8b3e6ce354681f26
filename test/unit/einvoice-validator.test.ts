import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { validateEInvoices } from '../helpers/einvoice-validator.ts';

const EXAMPLES = join(import.meta.dirname, '..', '..', 'vendor', 'einvoice', 'examples');
const example = (path: string) => ({ name: path, xml: readFileSync(join(EXAMPLES, path)) });

/**
 * The validator the e-invoice tests rely on, against the official examples it ships with: the valid ones pass and
 * each deliberately broken one is refused with the rule it breaks, in one batched run per profile. So a test that
 * finds our documents valid has run the rules, and the rules do refuse.
 */
describe('e-invoice validator (vendor/einvoice)', function () {
  this.timeout(120_000);

  it('passes the official Peppol examples and refuses the broken ones with the rule they break', async () => {
    const results = await validateEInvoices('peppol', [
      example('valid/peppol-invoice-base-example.xml'),
      example('valid/peppol-creditnote-base-creditnote-correction.xml'),
      example('valid/peppol-invoice-dk-supplier.DERIVED.xml'),
      example('invalid/peppol-invoice-base-example.BROKEN-BR-07.xml'),
      example('invalid/peppol-invoice-dk-supplier.DERIVED.BROKEN-DK-R-002.xml'),
      example('invalid/peppol-creditnote-base-creditnote-correction.BROKEN-no-IssueDate.xml'),
    ]);
    assert.deepEqual(
      results.map((r) => r.valid),
      [true, true, true, false, false, false],
    );
    assert.deepEqual(results[3]!.fatal.map((f) => f.id), ['BR-07']);
    assert.deepEqual(results[4]!.fatal.map((f) => f.id), ['DK-R-002']);
    assert.ok(results[5]!.fatal.some((f) => f.id === 'XSD'));
    assert.ok(results[5]!.fatal.some((f) => f.id === 'BR-03'));
  });

  it('passes the official OIOUBL examples and refuses the broken ones', async () => {
    const results = await validateEInvoices('oioubl', [
      example('valid/oioubl-invoice-OIOUBL_Invoice_v2p2.xml'),
      example('valid/oioubl-creditnote-OIOUBL_CreditNote_v2p2.xml'),
      example('invalid/oioubl-invoice-OIOUBL_Invoice_v2p2.BROKEN-no-supplier-PartyLegalEntity.xml'),
      example('invalid/oioubl-creditnote-OIOUBL_CreditNote_v2p2.BROKEN-no-customer-EndpointID.xml'),
    ]);
    assert.deepEqual(
      results.map((r) => r.valid),
      [true, true, false, false],
    );
    assert.ok(results[2]!.fatal.some((f) => f.id === 'F-INV034'));
    assert.ok(results[3]!.fatal.some((f) => f.id === 'F-CRN040'));
  });

  it('refuses what is not XML at all', async () => {
    const [result] = await validateEInvoices('peppol', [{ name: 'garbage', xml: '<Invoice>' }]);
    assert.equal(result!.valid, false);
    assert.equal(result!.fatal[0]!.id, 'XML-PARSE');
  });
});
