import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { buildEInvoice } from '../../services/einvoices/build-ubl.ts';
import { fikPaymentId } from '../../services/payments/fik-payment-id.ts';
import { describeFailures, validateEInvoices, validatorProfile, type ValidationResult } from '../helpers/einvoice-validator.ts';
import { call, createTestOrg, startTestApp, testClock, testDb, type TestApp, type TestOrg } from '../helpers/context.ts';

type Profile = 'peppol-bis-3' | 'oioubl';

/**
 * GET /v1/invoices/{id}/einvoice and /v1/creditnotes/{id}/einvoice (docs/einvoicing.md): every document the API
 * produces across the cases it supports passes the official validation of its profile (UBL 2.1 XSD and the
 * profile's schematron: CEN EN 16931 + Peppol incl. the Danish DK-R rules, or NemHandel's OIOUBL rules), checked
 * in one batched validator run per profile at the end; a deliberately broken copy of one of them is refused in the
 * same run. And the route's contract: profiles, defaults, refusals, headers, write-once.
 */
describe('e-invoices', function () {
  this.timeout(180_000);
  let t: TestApp;
  let org: TestOrg;
  let bare: TestOrg;
  const produced: Record<Profile, { name: string; xml: Buffer }[]> = { 'peppol-bis-3': [], oioubl: [] };
  const GLN = '5798009882806';

  before(async () => {
    t = await startTestApp();
    org = await createTestOrg({ name: 'Bager Hansen ApS', bankReg: '1234', bankAccount: '0001234567', email: 'faktura@bagerhansen.dk' });
    bare = await createTestOrg({ name: 'Uden Bank ApS' });
  });
  after(() => t.close());

  const api = (o: TestOrg, method: string, url: string, body?: unknown) => call(t.app, method, url, { key: o.apiKey, ...(body === undefined ? {} : { body }) });
  const customer = async (o: TestOrg, body: Record<string, unknown>): Promise<string> => {
    const res = await api(o, 'POST', '/v1/customers', { type: 'company', name: 'Kunde A/S', address: { street: 'Vestergade 12', postalCode: '1456', city: 'København K' }, ...body });
    assert.equal(res.status, 201, res.raw);
    return res.body.data.id;
  };
  const issue = async (o: TestOrg, body: Record<string, unknown>) => {
    const res = await api(o, 'POST', '/v1/invoices?issue=true', { buyerReference: 'Afd. 7', ...body });
    assert.equal(res.status, 201, res.raw);
    return res.body.data;
  };
  const credit = async (o: TestOrg, invoiceId: string) => {
    const res = await api(o, 'POST', `/v1/invoices/${invoiceId}/credit`, { reason: 'Fejlfakturering' });
    assert.equal(res.status, 201, res.raw);
    return res.body.data;
  };
  /** Fetches a document's e-invoice and keeps it for the batched validation. */
  const einvoice = async (o: TestOrg, path: string, name: string, profile?: Profile) => {
    const res = await t.app.inject({ method: 'GET', url: `${path}/einvoice${profile ? `?profile=${profile}` : ''}`, headers: { authorization: `Bearer ${o.apiKey}` } });
    assert.equal(res.statusCode, 200, res.body);
    const used: Profile = profile ?? (res.body.includes('<cbc:CustomizationID>OIOUBL-2.1') ? 'oioubl' : 'peppol-bis-3');
    produced[used].push({ name: `${name} (${used})`, xml: res.rawPayload });
    return res;
  };
  const both = async (o: TestOrg, path: string, name: string) => {
    for (const profile of ['peppol-bis-3', 'oioubl'] as const) await einvoice(o, path, name, profile);
  };
  /** An invoice and its credit note, each in both profiles. */
  const invoiceAndCredit = async (o: TestOrg, name: string, body: Record<string, unknown>) => {
    const inv = await issue(o, body);
    await both(o, `/v1/invoices/${inv.id}`, name);
    const cn = await credit(o, inv.id);
    await both(o, `/v1/creditnotes/${cn.id}`, `credit note of ${name}`);
    return inv;
  };

  const rugbroed = { description: 'Rugbrød, 1 kg', quantity: 40, unit: 'stk', unitPriceOere: 3500, discount: { type: 'percent', value: 10 } };
  const levering = { description: 'Levering', quantity: 1, unitPriceOere: 15000, discount: { type: 'amount', value: 5000 } };

  describe('every case the API supports, validated by the official rules', () => {
    it('a domestic company buyer (GLN), standard rate, discounts', async () => {
      const customerId = await customer(org, { cvr: '87654321', ean: GLN, contactPerson: 'Hans Hansen' });
      await invoiceAndCredit(org, 'company, standard rate', { customerId, lines: [rugbroed, levering], orderReference: 'PO-4711' });
    });

    it('a person buyer (Peppol participant, no CVR)', async () => {
      const customerId = await customer(org, { type: 'person', name: 'Ida Jensen', peppolId: `0088:${GLN}` });
      await invoiceAndCredit(org, 'person', { customerId, lines: [levering] });
    });

    it('every 0 % exemption reason, each on its own invoice', async () => {
      const cases: [string, Record<string, unknown>][] = [
        ['ML13', { cvr: '87654321', ean: GLN }],
        ['EKSPORT', { peppolId: '0184:87654321', cvr: '87654321' }],
        ['OMVENDT', { peppolId: '0184:DK87654321', cvr: '87654321', vatNumber: 'DK87654321' }],
        ['EU_VARE', { name: 'Kund AB', peppolId: '0198:DK87654321', vatNumber: 'SE556677889901', address: { street: 'Storgatan 1', postalCode: '11122', city: 'Stockholm', country: 'SE' } }],
      ];
      for (const [reason, fields] of cases) {
        const customerId = await customer(org, fields);
        const lines = [{ description: `Ydelse ${reason}`, quantity: 2.5, unit: 'timer', unitPriceOere: 40000, vatRateBps: 0, vatExemptionReason: reason }];
        await invoiceAndCredit(org, `0 % ${reason}`, { customerId, lines });
      }
    });

    it('mixed rates on one invoice: the standard rate and 0 % lines of several reasons', async () => {
      const customerId = await customer(org, { cvr: '87654321', ean: GLN });
      await invoiceAndCredit(org, 'mixed rates', {
        customerId,
        lines: [
          rugbroed,
          { description: 'Kursus', quantity: 1, unitPriceOere: 100000, vatRateBps: 0, vatExemptionReason: 'ML13' },
          { description: 'Eksport', quantity: 0.333, unit: 'kg', unitPriceOere: 12345, vatRateBps: 0, vatExemptionReason: 'EKSPORT' },
        ],
      });
    });

    it('two standard rates on one invoice: Peppol BIS 3 carries them, OIOUBL cannot (422 at /lines)', async () => {
      const customerId = await customer(org, { cvr: '87654321', ean: GLN });
      const inv = await issue(org, {
        customerId,
        lines: [rugbroed, { description: 'Halv sats', quantity: 3, unitPriceOere: 999, vatRateBps: 1250 }, { description: 'Kursus', quantity: 1, unitPriceOere: 100000, vatRateBps: 0, vatExemptionReason: 'ML13' }],
      });
      await einvoice(org, `/v1/invoices/${inv.id}`, 'two standard rates', 'peppol-bis-3');
      const res = await api(org, 'GET', `/v1/invoices/${inv.id}/einvoice?profile=oioubl`);
      assert.equal(res.status, 422, res.raw);
      assert.equal(res.body.error.code, 'einvoice_not_possible');
      assert.deepEqual(res.body.error.details.map((d: { path: string }) => d.path), ['/lines']);
    });

    it('many lines (the most an invoice takes)', async () => {
      const customerId = await customer(org, { cvr: '87654321', ean: GLN });
      const lines = Array.from({ length: 100 }, (_, i) => ({ description: `Vare nr. ${i + 1} & "særlig" <pakke>`, quantity: (i % 7) + 1, unitPriceOere: 1234 + i * 17 }));
      await invoiceAndCredit(org, 'many lines', { customerId, lines });
    });

    it('an invoice from a subscription period', async () => {
      const customerId = await customer(org, { cvr: '87654321', ean: GLN });
      const today = await testClock().today(org.organizationId);
      const sub = await api(org, 'POST', '/v1/subscriptions', {
        customerId, name: 'Hosting', interval: { unit: 'month', count: 1 }, startDate: today, dueDays: 14, autoSend: false,
        buyerReference: 'Abonnement 9', lines: [{ description: 'Server', quantity: 2, unitPriceOere: 10000 }],
      });
      assert.equal(sub.status, 201, sub.raw);
      assert.equal(sub.body.data.buyerReference, 'Abonnement 9');
      const run = await api(org, 'POST', `/v1/subscriptions/${sub.body.data.id}/run`);
      assert.equal(run.status, 201, run.raw);
      assert.equal(run.body.data.buyerReference, 'Abonnement 9');
      await both(org, `/v1/invoices/${run.body.data.id}`, 'subscription period');
    });

    it('without bank details (an organisation that has none)', async () => {
      const customerId = await customer(bare, { cvr: '87654321', ean: GLN });
      await invoiceAndCredit(bare, 'no bank details', { customerId, lines: [levering] });
    });

    it('with an FI-kort payment id: the issued invoice carries it as the payment means (FI card 71), its credit note none', async () => {
      const fikOrg = await createTestOrg({ name: 'Bager FI ApS', bankReg: '1234', bankAccount: '0001234567', fiCreditorNumber: '85799665' });
      const customerId = await customer(fikOrg, { cvr: '87654321', ean: GLN });
      const inv = await issue(fikOrg, { customerId, lines: [rugbroed] });
      await both(fikOrg, `/v1/invoices/${inv.id}`, 'FI-kort payment id');
      const note = await credit(fikOrg, inv.id);
      await both(fikOrg, `/v1/creditnotes/${note.id}`, 'credit note of FI-kort payment id');
      const paymentId = inv.fik.paymentId as string;
      assert.equal(paymentId, fikPaymentId(inv.number));
      const read = async (path: string, profile: Profile) =>
        (await t.app.inject({ method: 'GET', url: `${path}/einvoice?profile=${profile}`, headers: { authorization: `Bearer ${fikOrg.apiKey}` } })).body;
      const peppolXml = await read(`/v1/invoices/${inv.id}`, 'peppol-bis-3');
      assert.match(peppolXml, new RegExp(`<cac:PaymentMeans>\\s*<cbc:PaymentMeansCode>93</cbc:PaymentMeansCode>\\s*<cbc:PaymentID>71#${paymentId}</cbc:PaymentID>\\s*<cac:PayeeFinancialAccount>\\s*<cbc:ID>85799665</cbc:ID>`));
      const oioublXml = await read(`/v1/invoices/${inv.id}`, 'oioubl');
      assert.ok(oioublXml.includes(`<cbc:InstructionID>${paymentId}</cbc:InstructionID>`), oioublXml);
      assert.match(oioublXml, /<cbc:PaymentChannelCode[^>]*>DK:FIK<\/cbc:PaymentChannelCode>/);
      assert.match(oioublXml, /<cac:CreditAccount>\s*<cbc:AccountID>85799665<\/cbc:AccountID>\s*<\/cac:CreditAccount>/);
      // The credit note has nothing to pay.
      for (const profile of ['peppol-bis-3', 'oioubl'] as const) {
        const xml = await read(`/v1/creditnotes/${note.id}`, profile);
        assert.ok(!xml.includes(paymentId) && !xml.includes('<cbc:PaymentMeansCode>93<'), xml);
      }
      // Without one (the invoices above): no FI payment means.
      assert.ok(produced['peppol-bis-3'].filter((d) => d.name.startsWith('company, standard rate')).every((d) => !d.xml.toString().includes('<cbc:PaymentMeansCode>93<')));
    });

    it('the builder carries a payment id in both profiles (built from an issued view)', async () => {
      const customerId = await customer(org, { cvr: '87654321', ean: GLN });
      const inv = await issue(org, { customerId, lines: [rugbroed] });
      const pdf = await t.app.inject({ method: 'GET', url: `/v1/invoices/${inv.id}/pdf`, headers: { authorization: `Bearer ${org.apiKey}` } });
      const { loadEInvoiceSource } = await import('../../services/einvoices/einvoice-view.ts');
      const { findInvoiceRow } = await import('../../services/invoices/invoice-queries.ts');
      const { db } = testDb();
      const row = (await findInvoiceRow(db.sql, org.organizationId, inv.id))!;
      const source = await loadEInvoiceSource(db.sql, t.deps.documents, org.organizationId, row);
      assert.deepEqual(source.pdf, pdf.rawPayload);
      assert.equal(source.fik, null);
      for (const profile of ['peppol-bis-3', 'oioubl'] as const) {
        const xml = buildEInvoice({ ...source, fik: { paymentId: '000000067097535', creditorNumber: '85799665' } }, profile);
        assert.match(xml.toString(), profile === 'oioubl' ? /<cbc:InstructionID>000000067097535</ : /<cbc:PaymentID>71#000000067097535</);
        produced[profile].push({ name: `FI-kort payment id (${profile})`, xml });
      }
    });
  });

  describe('the route', () => {
    let invoiceId: string;
    let customerId: string;

    before(async () => {
      customerId = await customer(org, { cvr: '87654321', ean: GLN });
      invoiceId = (await issue(org, { customerId, lines: [rugbroed] })).id;
    });

    it('answers application/xml; charset=utf-8 with the SHA-256 of the bytes as ETag, and the PDF embedded', async () => {
      const res = await einvoice(org, `/v1/invoices/${invoiceId}`, 'headers');
      assert.equal(res.headers['content-type'], 'application/xml; charset=utf-8');
      assert.equal(res.headers.etag, `"${createHash('sha256').update(res.rawPayload).digest('hex')}"`);
      const pdf = await t.app.inject({ method: 'GET', url: `/v1/invoices/${invoiceId}/pdf`, headers: { authorization: `Bearer ${org.apiKey}` } });
      assert.ok(res.body.includes(pdf.rawPayload.toString('base64')), 'the PDF is embedded as base64');
      assert.match(res.body, /mimeCode="application\/pdf"/);
    });

    it('defaults to OIOUBL for a buyer with an ean, Peppol BIS 3 otherwise @cluster', async () => {
      assert.match((await einvoice(org, `/v1/invoices/${invoiceId}`, 'default ean')).body, /<cbc:CustomizationID>OIOUBL-2\.1</);
      const peppolCustomer = await customer(org, { peppolId: '0184:87654321' });
      const other = await issue(org, { customerId: peppolCustomer, lines: [rugbroed] });
      assert.match((await einvoice(org, `/v1/invoices/${other.id}`, 'default peppol')).body, /urn:fdc:peppol\.eu:2017:poacc:billing:3\.0/);
    });

    it('is write-once per profile: the same bytes after the customer changes', async () => {
      const first = { peppol: (await einvoice(org, `/v1/invoices/${invoiceId}`, 'w1', 'peppol-bis-3')).rawPayload, oioubl: (await einvoice(org, `/v1/invoices/${invoiceId}`, 'w1', 'oioubl')).rawPayload };
      const patched = await api(org, 'PATCH', `/v1/customers/${customerId}`, { name: 'Nyt Navn A/S', ean: null, peppolId: '0184:11223344', vatNumber: 'DK11223344' });
      assert.equal(patched.status, 200, patched.raw);
      assert.deepEqual((await einvoice(org, `/v1/invoices/${invoiceId}`, 'w2', 'peppol-bis-3')).rawPayload, first.peppol);
      assert.deepEqual((await einvoice(org, `/v1/invoices/${invoiceId}`, 'w2', 'oioubl')).rawPayload, first.oioubl);
      assert.ok(!first.peppol.toString().includes('Nyt Navn'));
      const [row] = await testDb().db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM invoice_einvoices WHERE invoice_id = ${invoiceId}`;
      assert.equal(row!.n, 2);
    });

    it('credit notes through /v1/creditnotes/{id}/einvoice and /v1/invoices/{id}/einvoice alike; an invoice id is not a credit note', async () => {
      const inv = await issue(org, { customerId: await customer(org, { ean: GLN }), lines: [levering] });
      const cn = await credit(org, inv.id);
      const a = await einvoice(org, `/v1/creditnotes/${cn.id}`, 'cn route', 'peppol-bis-3');
      const b = await einvoice(org, `/v1/invoices/${cn.id}`, 'cn via invoices', 'peppol-bis-3');
      assert.deepEqual(a.rawPayload, b.rawPayload);
      assert.match(a.body, /<CreditNote /);
      assert.match(a.body, /<cac:BillingReference>\s*<cac:InvoiceDocumentReference>\s*<cbc:ID>\d+<\/cbc:ID>/);
      const wrong = await api(org, 'GET', `/v1/creditnotes/${inv.id}/einvoice`);
      assert.equal(wrong.status, 404);
      assert.equal(wrong.body.error.code, 'credit_note_not_found');
    });

    it('400 validation_failed at /profile for another profile', async () => {
      const res = await api(org, 'GET', `/v1/invoices/${invoiceId}/einvoice?profile=ubl`);
      assert.equal(res.status, 400);
      assert.equal(res.body.error.code, 'validation_failed');
      assert.deepEqual(res.body.error.details.map((d: { path: string }) => d.path), ['/profile']);
    });

    it('404 for an unknown invoice, 422 invoice_not_issued for a draft', async () => {
      const unknown = await api(org, 'GET', '/v1/invoices/01900000-0000-7000-8000-000000000000/einvoice');
      assert.equal(unknown.status, 404);
      assert.equal(unknown.body.error.code, 'invoice_not_found');
      const draft = (await api(org, 'POST', '/v1/invoices', { customerId, lines: [levering], buyerReference: 'x' })).body.data;
      const res = await api(org, 'GET', `/v1/invoices/${draft.id}/einvoice`);
      assert.equal(res.status, 422);
      assert.equal(res.body.error.code, 'invoice_not_issued');
    });

    it('422 einvoice_not_possible names what the issued snapshot lacks', async () => {
      const plain = await issue(org, { customerId: await customer(org, {}), lines: [levering] });
      const none = await api(org, 'GET', `/v1/invoices/${plain.id}/einvoice`);
      assert.equal(none.status, 422, none.raw);
      assert.equal(none.body.error.code, 'einvoice_not_possible');
      assert.deepEqual(none.body.error.details.map((d: { path: string }) => d.path), ['/customer/ean']);

      // Reverse charge without the buyer's VAT number (a person: no CVR to derive it from), in either profile.
      const person = await customer(org, { type: 'person', name: 'Ida Jensen', ean: GLN });
      const omvendt = await issue(org, { customerId: person, lines: [{ description: 'Skrot', quantity: 1, unitPriceOere: 1000, vatRateBps: 0, vatExemptionReason: 'OMVENDT' }] });
      for (const profile of ['oioubl', 'peppol-bis-3']) {
        const res = await api(org, 'GET', `/v1/invoices/${omvendt.id}/einvoice?profile=${profile}`);
        assert.equal(res.status, 422, res.raw);
        assert.deepEqual(res.body.error.details.map((d: { path: string }) => d.path), ['/customer/vatNumber']);
      }

      // A Peppol participant of a foreign scheme has no OIOUBL address.
      const foreign = await issue(org, { customerId: await customer(org, { peppolId: '9930:DE123456789' }), lines: [levering] });
      const oioubl = await api(org, 'GET', `/v1/invoices/${foreign.id}/einvoice?profile=oioubl`);
      assert.equal(oioubl.status, 422, oioubl.raw);
      assert.deepEqual(oioubl.body.error.details.map((d: { path: string }) => d.path), ['/customer/ean']);
      await einvoice(org, `/v1/invoices/${foreign.id}`, 'foreign scheme', 'peppol-bis-3');
    });
  });

  // Last, so that it sees every document the tests above produced.
  describe('the official validation', () => {
    it('a deliberately broken document is refused by the same validation, and every produced document passes', async () => {
      // The seller's legal entity (its CVR) taken out of a produced document: DK-R-002 in Peppol, F-INV034 in OIOUBL.
      const broken = (xml: Buffer) => Buffer.from(xml.toString().replace(/<cac:PartyLegalEntity>[\s\S]*?<\/cac:PartyLegalEntity>/, ''));
      const results: Record<Profile, ValidationResult[]> = { 'peppol-bis-3': [], oioubl: [] };
      for (const profile of ['peppol-bis-3', 'oioubl'] as const) {
        const docs = produced[profile];
        assert.ok(docs.length >= 20, `${docs.length} ${profile} documents`);
        results[profile] = await validateEInvoices(validatorProfile(profile), [...docs, { name: 'BROKEN', xml: broken(docs[0]!.xml) }]);
      }
      for (const profile of ['peppol-bis-3', 'oioubl'] as const) {
        const all = results[profile];
        const brokenResult = all.at(-1)!;
        assert.equal(brokenResult.valid, false, `${profile}: the broken document passed`);
        assert.ok(brokenResult.fatal.some((f) => f.id === (profile === 'oioubl' ? 'F-INV034' : 'DK-R-002')), JSON.stringify(brokenResult.fatal));
        const good = all.slice(0, -1);
        assert.equal(describeFailures(good), '', `${profile}: documents the official rules refuse`);
        assert.ok(good.every((r) => r.valid));
      }
    });
  });
});
