import assert from 'node:assert/strict';
import { gs1CheckDigit } from '../../services/customers/einvoice-address.ts';
import { pdfText } from '../helpers/pdf-text.ts';
import { call, createTestOrg, startTestApp, testDb, type TestApp, type TestOrg } from '../helpers/context.ts';

/**
 * The e-invoice fields (docs/einvoicing.md): a customer's `ean`, `peppolId` and `vatNumber` with their checks in
 * create, PATCH and inline find-or-create; an invoice's `buyerReference` and `orderReference`, returned and printed;
 * and `422 buyer_reference_required` at issue for a customer with an e-invoice address, before a number is taken.
 */
describe('e-invoice fields of customers and invoices', () => {
  let t: TestApp;
  let org: TestOrg;
  const lines = [{ description: 'Rugbrød', quantity: 2, unitPriceOere: 4500 }];
  /** GLNs with a good check digit, and one with the last digit off by one. */
  const GLN = '5798009882806';
  const BAD_GLN = '5798009882807';

  before(async () => {
    t = await startTestApp();
    org = await createTestOrg();
  });
  after(() => t.close());

  const post = (body: Record<string, unknown>) => call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: { type: 'company', name: 'Kunde A/S', ...body } });
  const refusedAt = (res: Awaited<ReturnType<typeof call>>, path: string) => {
    assert.equal(res.status, 400, res.raw);
    assert.equal(res.body.error.code, 'validation_failed');
    assert.deepEqual(res.body.error.details.map((d: { path: string }) => d.path), [path], res.raw);
  };

  it('the GS1 check digit of a known GLN and GTIN', () => {
    assert.equal(gs1CheckDigit(GLN.slice(0, 12)), 6);
    assert.equal(gs1CheckDigit('400638133393'), 1);
  });

  it('stores and returns ean, peppolId and vatNumber; null by default @cluster', async () => {
    const plain = await post({});
    assert.equal(plain.status, 201, plain.raw);
    assert.deepEqual([plain.body.data.ean, plain.body.data.peppolId, plain.body.data.vatNumber], [null, null, null]);
    const full = await post({ ean: GLN, peppolId: '0184:DK12345678', vatNumber: 'DK12345678' });
    assert.equal(full.status, 201, full.raw);
    const read = await call(t.app, 'GET', `/v1/customers/${full.body.data.id}`, { key: org.apiKey });
    assert.deepEqual([read.body.data.ean, read.body.data.peppolId, read.body.data.vatNumber], [GLN, '0184:DK12345678', 'DK12345678']);
  });

  const goodPeppolIds = ['0184:12345678', '0184:DK12345678', `0088:${GLN}`, '0198:DK12345678', '9930:DE.123-abc', `0007:${'a'.repeat(50)}`];
  for (const peppolId of goodPeppolIds) {
    it(`takes peppolId ${peppolId.length > 30 ? `${peppolId.slice(0, 20)}…` : peppolId}`, async () => {
      const res = await post({ peppolId });
      assert.equal(res.status, 201, res.raw);
      assert.equal(res.body.data.peppolId, peppolId);
    });
  }

  const badPeppolIds: [string, string][] = [
    ['0184:1234567', 'a CVR of 7 digits'],
    ['0184:DK1234567X', 'a CVR with a letter'],
    ['0184:SE12345678', 'another country before a CVR'],
    [`0088:${BAD_GLN}`, 'a GLN with a wrong check digit'],
    ['0088:579800988280', 'a GLN of 12 digits'],
    ['0198:12345678', 'a Danish VAT number without DK'],
    [`0007:${'a'.repeat(51)}`, 'an identifier of 51 characters'],
    ['0007:a_b', 'a character outside [A-Za-z0-9.-]'],
    ['184:12345678', 'a 3-digit scheme'],
    ['0184', 'no identifier'],
    ['0184:', 'an empty identifier'],
  ];
  for (const [peppolId, what] of badPeppolIds) {
    it(`refuses peppolId with ${what}: 400 at /peppolId`, async () => refusedAt(await post({ peppolId }), '/peppolId'));
  }

  for (const [ean, what] of [[BAD_GLN, 'a wrong check digit'], ['579800988280', '12 digits'], ['57980098828061', '14 digits'], ['579800988280A', 'a letter']]) {
    it(`refuses ean with ${what}: 400 at /ean`, async () => refusedAt(await post({ ean }), '/ean'));
  }

  for (const [vatNumber, what] of [['dk12345678', 'small letters'], ['DK1', 'one character after the prefix'], [`DK${'1'.repeat(14)}`, '14 characters after the prefix'], ['1K12345678', 'a digit in the prefix']]) {
    it(`refuses vatNumber with ${what}: 400 at /vatNumber`, async () => refusedAt(await post({ vatNumber }), '/vatNumber'));
  }
  it('takes vatNumber at both bounds', async () => {
    assert.equal((await post({ vatNumber: 'SE12' })).status, 201);
    assert.equal((await post({ vatNumber: `FR${'A'.repeat(13)}` })).status, 201);
  });

  it('names both bad fields at once', async () => {
    const res = await post({ ean: BAD_GLN, peppolId: '0198:12345678' });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body.error.details.map((d: { path: string }) => d.path), ['/ean', '/peppolId']);
  });

  it('PATCH sets, checks and clears them', async () => {
    const id = (await post({})).body.data.id;
    refusedAt(await call(t.app, 'PATCH', `/v1/customers/${id}`, { key: org.apiKey, body: { ean: BAD_GLN } }), '/ean');
    refusedAt(await call(t.app, 'PATCH', `/v1/customers/${id}`, { key: org.apiKey, body: { peppolId: '0088:1' } }), '/peppolId');
    const set = await call(t.app, 'PATCH', `/v1/customers/${id}`, { key: org.apiKey, body: { ean: GLN, vatNumber: 'DK87654321' } });
    assert.equal(set.status, 200, set.raw);
    assert.deepEqual([set.body.data.ean, set.body.data.vatNumber], [GLN, 'DK87654321']);
    const cleared = await call(t.app, 'PATCH', `/v1/customers/${id}`, { key: org.apiKey, body: { ean: null } });
    assert.equal(cleared.body.data.ean, null);
    assert.equal(cleared.body.data.vatNumber, 'DK87654321');
  });

  it('an inline customer on an invoice is checked too, at /customer/…, and created with the fields', async () => {
    refusedAt(
      await call(t.app, 'POST', '/v1/invoices', { key: org.apiKey, body: { customer: { type: 'company', name: 'Inline A/S', ean: BAD_GLN }, lines } }),
      '/customer/ean',
    );
    refusedAt(
      await call(t.app, 'POST', '/v1/invoices', { key: org.apiKey, body: { customer: { type: 'company', name: 'Inline A/S', peppolId: '0184:1' }, lines } }),
      '/customer/peppolId',
    );
    const res = await call(t.app, 'POST', '/v1/invoices', {
      key: org.apiKey,
      body: { customer: { type: 'company', name: 'Inline A/S', externalReference: 'inline-ean', ean: GLN }, lines, buyerReference: 'K-1' },
    });
    assert.equal(res.status, 201, res.raw);
    const customer = await call(t.app, 'GET', `/v1/customers/${res.body.data.customerId}`, { key: org.apiKey });
    assert.equal(customer.body.data.ean, GLN);
  });

  describe('buyerReference and orderReference', () => {
    it('are stored on drafts (POST, PUT), returned, and null by default', async () => {
      const customerId = (await post({})).body.data.id;
      const created = await call(t.app, 'POST', '/v1/invoices', { key: org.apiKey, body: { customerId, lines, buyerReference: 'Afd. 7', orderReference: 'PO-1' } });
      assert.equal(created.status, 201, created.raw);
      assert.deepEqual([created.body.data.buyerReference, created.body.data.orderReference], ['Afd. 7', 'PO-1']);
      const replaced = await call(t.app, 'PUT', `/v1/invoices/${created.body.data.id}`, { key: org.apiKey, body: { customerId, lines, orderReference: 'PO-2' } });
      assert.equal(replaced.status, 200, replaced.raw);
      assert.deepEqual([replaced.body.data.buyerReference, replaced.body.data.orderReference], [null, 'PO-2']);
    });

    for (const field of ['buyerReference', 'orderReference']) {
      it(`${field}: 1..200 characters or null (400 at /${field} outside)`, async () => {
        const customerId = (await post({})).body.data.id;
        refusedAt(await call(t.app, 'POST', '/v1/invoices', { key: org.apiKey, body: { customerId, lines, [field]: '' } }), `/${field}`);
        refusedAt(await call(t.app, 'POST', '/v1/invoices', { key: org.apiKey, body: { customerId, lines, [field]: 'x'.repeat(201) } }), `/${field}`);
        const longest = await call(t.app, 'POST', '/v1/invoices', { key: org.apiKey, body: { customerId, lines, [field]: 'x'.repeat(200) } });
        assert.equal(longest.status, 201, longest.raw);
        const none = await call(t.app, 'POST', '/v1/invoices', { key: org.apiKey, body: { customerId, lines, [field]: null } });
        assert.equal(none.body.data[field], null);
      });
    }

    it('are printed on the PDF', async () => {
      const customerId = (await post({})).body.data.id;
      const issued = await call(t.app, 'POST', '/v1/invoices?issue=true', {
        key: org.apiKey,
        body: { customerId, lines, buyerReference: 'Indkøb 4711', orderReference: 'PO-998877' },
      });
      assert.equal(issued.status, 201, issued.raw);
      const pdf = await t.app.inject({ method: 'GET', url: `/v1/invoices/${issued.body.data.id}/pdf`, headers: { authorization: `Bearer ${org.apiKey}` } });
      const text = await pdfText(pdf.rawPayload);
      assert.match(text, /Købers reference:? Indkøb 4711/);
      assert.match(text, /Ordrenr\.:? PO-998877/);
    });
  });

  describe('buyer_reference_required', () => {
    const nextNumber = async () =>
      (await testDb().db.sql<{ next_number: number }[]>`SELECT next_number FROM number_series WHERE organization_id = ${org.organizationId}`)[0]?.next_number ?? null;

    for (const [what, fields] of [['an ean', { ean: GLN }], ['a peppolId', { peppolId: '0184:12345678' }]] as const) {
      it(`issuing for a customer with ${what} and neither reference is 422 before a number is taken`, async () => {
        const customerId = (await post(fields)).body.data.id;
        const draft = (await call(t.app, 'POST', '/v1/invoices', { key: org.apiKey, body: { customerId, lines } })).body.data;
        const before = await nextNumber();
        const res = await call(t.app, 'POST', `/v1/invoices/${draft.id}/issue`, { key: org.apiKey });
        assert.equal(res.status, 422, res.raw);
        assert.equal(res.body.error.code, 'buyer_reference_required');
        assert.equal(await nextNumber(), before, 'no number taken');
        const still = await call(t.app, 'GET', `/v1/invoices/${draft.id}`, { key: org.apiKey });
        assert.equal(still.body.data.status, 'draft');

        const created = await call(t.app, 'POST', '/v1/invoices?issue=true', { key: org.apiKey, body: { customerId, lines } });
        assert.equal(created.status, 422, created.raw);
        assert.equal(created.body.error.code, 'buyer_reference_required');
        assert.equal(await nextNumber(), before, 'no number taken');
      });
    }

    it('either reference is enough; a customer without an e-invoice address needs none', async () => {
      const eanCustomer = (await post({ ean: GLN })).body.data.id;
      for (const ref of [{ buyerReference: 'B' }, { orderReference: 'O' }]) {
        const res = await call(t.app, 'POST', '/v1/invoices?issue=true', { key: org.apiKey, body: { customerId: eanCustomer, lines, ...ref } });
        assert.equal(res.status, 201, res.raw);
      }
      const plain = (await post({ vatNumber: 'DK12345678' })).body.data.id;
      const res = await call(t.app, 'POST', '/v1/invoices?issue=true', { key: org.apiKey, body: { customerId: plain, lines } });
      assert.equal(res.status, 201, res.raw);
    });
  });
});
