import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { ListEnvelope } from '../../contracts/common.ts';
import { Customer } from '../../contracts/customers.ts';
import { customerPageJson, type CustomerPage } from '../../services/api/routes/v1/customer-page-json.ts';
import { customerOf, toCustomers, type CustomerRow } from '../../services/customers/customer-queries.ts';
import { createKeyring } from '../../services/shared/crypto.ts';

const keyring = createKeyring(Buffer.alloc(32, 3));

/** What the list route's response schema writes for `page` (Fastify's own serialiser of that schema). */
async function schemaBytes(page: unknown): Promise<{ status: number; body: string }> {
  const app = Fastify();
  app.get('/', { schema: { response: { 200: ListEnvelope(Customer) } } }, async () => page);
  const res = await app.inject('/');
  await app.close();
  return { status: res.statusCode, body: res.body };
}

const at = new Date('2026-03-01T09:30:00.123Z');

/** A row as postgres.js reads it: the address with JSONB's key order (by length), e-mail and phone encrypted. */
function row(n: number, over: Partial<Omit<CustomerRow, 'email_enc' | 'phone_enc'>> & { email?: string | null; phone?: string | null } = {}): CustomerRow {
  const { email = `bogholderi+${n}@kunde.example.dk`, phone = '+45 20 00 00 12', ...rest } = over;
  return {
    id: `01936b8e-0000-7000-8000-${String(n).padStart(12, '0')}`,
    type: n % 2 ? 'person' : 'company',
    name: `Kunde ${n} ApS`,
    cvr: n % 3 ? '12345678' : null,
    address: { city: 'Aarhus C', street: `Vestergade ${n}`, country: 'DK', postalCode: '8000' },
    email_enc: email === null ? null : keyring.encrypt(email),
    phone_enc: phone === null ? null : keyring.encrypt(phone),
    has_cpr: n % 4 === 0,
    contact_person: n % 5 ? null : 'Jens "JJ" Hansen',
    language: n % 3 === 0 ? null : n % 3 === 1 ? 'da' : 'en',
    external_reference: `crm-${n}`,
    metadata: n % 2 ? { segment: 'bakery', 'region.code': '82', '10': 'ten', '2': 'two' } : null,
    ean: n % 7 ? null : '5790000000005',
    peppol_id: n % 7 ? null : '0184:DK12345678',
    vat_number: n % 7 ? null : 'DK12345678',
    created_at: at,
    updated_at: at,
    ...rest,
  };
}

const page = (rows: CustomerRow[], nextCursor: string | null = null): CustomerPage => ({ data: toCustomers(keyring, rows), meta: { nextCursor } });

describe('the customer page JSON of GET /v1/customers', () => {
  it('has every Customer field, in the schema\'s order', () => {
    assert.deepEqual(Object.keys(customerOf(row(1), 'a@b.dk', null)), Object.keys(Customer.properties));
  });

  it('writes the same bytes as the response schema: nulls, partial and reordered addresses, metadata, escapes and non-ASCII text', async () => {
    const rows = Array.from({ length: 30 }, (_, n) => row(n));
    rows.push(
      row(40, { address: { postalCode: '1000' }, email: null, phone: null }),
      row(41, { address: { country: 'SE', city: 'Malmö' }, metadata: {} }),
      row(42, { address: {}, name: 'Back\\slash "quoted" \u0001 tab\t line\n', email: 'ægir@søstrene.dk', phone: '' }),
      row(43, { address: null, name: 'Emoji 😀 and ø', contact_person: '\u2028\u2029', metadata: { 'x"y': 'a\\b' } }),
    );
    for (const nextCursor of [null, 'b64url_-cursor']) {
      const p = page(rows, nextCursor);
      const expected = await schemaBytes(p);
      assert.equal(expected.status, 200);
      assert.equal(customerPageJson(p), expected.body);
    }
    const empty = page([]);
    assert.equal(customerPageJson(empty), (await schemaBytes(empty)).body);
  });

  it('leaves to the schema every page with a value the schema would refuse or write differently', async () => {
    const cases: [string, Partial<CustomerRow>][] = [
      ['an address field the schema lacks', { address: { street: 'x', floor: '2' } as never }],
      ['a street over 200 characters', { address: { street: 'x'.repeat(201) } }],
      ['a number as postal code', { address: { postalCode: 8000 } as never }],
      ['an address that is an array', { address: [] as never }],
      ['a metadata value that is not text', { metadata: { n: 1 } as never }],
      ['an empty metadata key', { metadata: { '': 'x' } }],
      ['a metadata key over 40 characters', { metadata: { ['k'.repeat(41)]: 'x' } }],
      ['a metadata value over 500 characters', { metadata: { k: 'x'.repeat(501) } }],
      ['more than 50 metadata keys', { metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v'])) }],
      ['a type outside the union', { type: 'robot' as never }],
      ['a language outside the union', { language: 'de' as never }],
      ['a number as name', { name: 7 as never }],
      ['a number as cvr', { cvr: 12345678 as never }],
      ['hasCpr as text', { has_cpr: 'yes' as never }],
    ];
    for (const [what, over] of cases) {
      const p = page([row(1), row(2, over)]);
      assert.equal(customerPageJson(p), undefined, what);
      // Each is a real difference: the schema refuses the page (500) or writes it otherwise than JSON.stringify.
      const bySchema = await schemaBytes(p);
      assert.ok(bySchema.status !== 200 || bySchema.body !== JSON.stringify(p), what);
    }
    // And a cursor that is not text.
    assert.equal(customerPageJson({ data: [], meta: { nextCursor: 7 as never } }), undefined);
  });
});
