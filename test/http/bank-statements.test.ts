import assert from 'node:assert/strict';
import { call, createTestKey, createTestOrg, startTestApp, testDb, type TestApp, type TestOrg } from '../helpers/context.ts';
import { copenhagenToday, addDays } from '../../services/shared/clock.ts';
import { fikPaymentId } from '../../services/payments/fik-payment-id.ts';
import { camt053, VERSIONS, type EntryFixture, type StatementFixture, type Version } from '../helpers/camt053.ts';

/** One VAT-exempt line, so an invoice's gross is exactly the given amount. */
const line = (oere: number) => ({ description: 'Konsulentydelse', quantity: 1, unitPriceOere: oere, vatRateBps: 0, vatExemptionReason: 'ML13' });
const kr = (oere: number): string => (oere / 100).toFixed(2);

describe('bank statements (camt.053)', () => {
  let t: TestApp;
  const sql = () => testDb().db.sql;
  const today = () => copenhagenToday(new Date());
  const yesterday = () => addDays(today(), -1);

  interface Setup { org: TestOrg; customerId: string }
  let orgs = 0;
  async function setup(): Promise<Setup> {
    const org = await createTestOrg({ name: `Bank ApS ${++orgs}`, fiCreditorNumber: '85799665' });
    const customerId = (await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: { type: 'company', name: 'Kunde A/S' } })).body.data.id;
    return { org, customerId };
  }

  /** An issued invoice, with the FI-kort payment id its number gives (the organisation has a creditor number). */
  async function issued(s: Setup, grossOere: number) {
    const res = await call(t.app, 'POST', '/v1/invoices?issue=true', { key: s.org.apiKey, body: { customerId: s.customerId, lines: [line(grossOere)] } });
    assert.equal(res.status, 201, res.raw);
    const inv = res.body.data as { id: string; number: number; fik: { paymentId: string } };
    assert.equal(inv.fik.paymentId, fikPaymentId(inv.number));
    return { ...inv, paymentId: inv.fik.paymentId };
  }

  const post = (s: Setup, xml: string, opts: { key?: string; idempotencyKey?: string; contentType?: string } = {}) =>
    call(t.app, 'POST', '/v1/bank-statements', {
      key: opts.key ?? s.org.apiKey,
      body: xml,
      headers: { 'content-type': opts.contentType ?? 'application/xml' },
      ...(opts.idempotencyKey ? { idempotencyKey: opts.idempotencyKey } : {}),
    });

  const doc = (statements: StatementFixture[], v: Version = 8) => camt053(v, statements);
  const stmt = (id: string, entries: EntryFixture[], iban?: string): StatementFixture => ({ id, entries, ...(iban ? { iban } : {}), from: addDays(today(), -7), to: today() });

  const payments = (s: Setup) =>
    sql()<{ invoice_id: string; amount_oere: number; source: string; booking_key: string; payment_date: string; outcome: string }[]>`
      SELECT invoice_id, amount_oere, source, booking_key, payment_date, outcome FROM payments WHERE organization_id = ${s.org.organizationId} ORDER BY id`;
  const imports = async (s: Setup) =>
    Number((await sql()<{ n: string }[]>`SELECT count(*) AS n FROM bank_statements WHERE organization_id = ${s.org.organizationId}`)[0]!.n);
  const entries = async (s: Setup, statementId: string, query = '') => {
    const res = await call(t.app, 'GET', `/v1/bank-statements/${statementId}/entries${query}`, { key: s.org.apiKey });
    assert.equal(res.status, 200, res.raw);
    return res.body as { data: { id: string; bookingDate: string; amountOere: number; reference: string | null; remittance: string | null; status: string; invoiceId: string | null; paymentId: string | null }[]; meta: { nextCursor: string | null } };
  };

  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  it('imports a statement: matches by payment id (bare and framed) and by number with the exact balance, books each as a payment @cluster', async () => {
    const s = await setup();
    const a = await issued(s, 125_000);
    const b = await issued(s, 40_000);
    const c = await issued(s, 30_000);
    const d = await issued(s, 99_900);
    const day = yesterday();
    const xml = doc([stmt('STMT-1', [
      { amount: kr(125_000), acctSvcrRef: 'R-1', bookingDate: day, txs: [{ ref: a.paymentId }] },
      { amount: kr(10_000), acctSvcrRef: 'R-2', bookingDate: day, txs: [{ ustrd: [`Indbetaling +71<${b.paymentId}+85799665<`] }] },
      { amount: kr(30_000), acctSvcrRef: 'R-3', bookingDate: day, txs: [{ ustrd: [`Faktura ${c.number}`] }] },
      // The number of an open invoice, but not its balance: unmatched.
      { amount: kr(99_000), acctSvcrRef: 'R-4', bookingDate: day, txs: [{ ustrd: [`Faktura ${d.number}`] }] },
      // Two open invoices named: unmatched, whatever the amount.
      { amount: kr(30_000), acctSvcrRef: 'R-5', bookingDate: day, txs: [{ ustrd: [`Faktura ${c.number} og ${d.number}`] }] },
      { amount: kr(5_000), direction: 'DBIT', acctSvcrRef: 'R-6', bookingDate: day, txs: [{ ref: a.paymentId }] },
      { amount: '10.00', currency: 'EUR', acctSvcrRef: 'R-7', bookingDate: day, txs: [{ ref: a.paymentId }] },
      { amount: kr(1_000), status: 'PDNG', acctSvcrRef: 'R-8', bookingDate: day, txs: [{ ref: a.paymentId }] },
    ])]);
    const res = await post(s, xml);
    assert.equal(res.status, 201, res.raw);
    const id = res.body.data.id as string;
    assert.equal(res.headers.location, `/v1/bank-statements/${id}`);
    assert.deepEqual(res.body, {
      data: {
        id, accountId: 'DK5000400440116243', statementIds: ['STMT-1'], from: addDays(today(), -7), to: today(),
        counts: { entries: 8, matched: 3, unmatched: 2, duplicate: 0, ignored: 3 },
      },
      meta: {},
    });
    const read = await call(t.app, 'GET', `/v1/bank-statements/${id}`, { key: s.org.apiKey });
    assert.equal(read.status, 200);
    assert.deepEqual(read.body, res.body);

    const rows = await payments(s);
    assert.deepEqual(rows.map((r) => [r.invoice_id, r.amount_oere, r.source, r.payment_date, r.outcome]).sort(), [
      [a.id, 125_000, 'bank', day, 'paid_in_full'],
      [b.id, 10_000, 'bank', day, 'partial'],
      [c.id, 30_000, 'bank', day, 'paid_in_full'],
    ].sort());
    assert.ok(rows.every((r) => r.booking_key.startsWith('DK5000400440116243:a:R-')));
    // As the payment route books: statuses, balances and events.
    const invA = (await call(t.app, 'GET', `/v1/invoices/${a.id}`, { key: s.org.apiKey })).body.data;
    assert.deepEqual([invA.status, invA.balanceOere], ['paid', 0]);
    const invB = (await call(t.app, 'GET', `/v1/invoices/${b.id}`, { key: s.org.apiKey })).body.data;
    assert.deepEqual([invB.status, invB.balanceOere], ['issued', 30_000]);
    const events = await sql()<{ type: string; data: Record<string, unknown> }[]>`
      SELECT type, data FROM events WHERE organization_id = ${s.org.organizationId} AND type IN ('payment.received', 'invoice.paid') ORDER BY sekvensnummer, type`;
    assert.equal(events.filter((e) => e.type === 'payment.received').length, 3);
    assert.deepEqual(events.filter((e) => e.type === 'invoice.paid').map((e) => e.data.invoiceId).sort(), [a.id, c.id].sort());
    assert.ok(events.filter((e) => e.type === 'payment.received').every((e) => e.data.source === 'bank' && e.data.paymentDate === day));

    const list = await entries(s, id);
    assert.deepEqual(list.data.map((e) => [e.amountOere, e.status, e.invoiceId]), [
      [125_000, 'matched', a.id], [10_000, 'matched', b.id], [30_000, 'matched', c.id], [99_000, 'unmatched', null], [30_000, 'unmatched', null],
      [-5_000, 'ignored', null], [1_000, 'ignored', null], [1_000, 'ignored', null],
    ]);
    assert.deepEqual(list.data[0], {
      id: list.data[0]!.id, bookingDate: day, amountOere: 125_000, reference: a.paymentId, remittance: null, status: 'matched', invoiceId: a.id,
      paymentId: list.data[0]!.paymentId,
    });
    assert.equal((await call(t.app, 'GET', `/v1/payments/${list.data[0].paymentId}`, { key: s.org.apiKey })).body.data.source, 'bank');
    assert.equal(list.data[2]!.remittance, `Faktura ${c.number}`);
    assert.equal(list.meta.nextCursor, null);

    // The status filter, and cursor pages in document order.
    assert.deepEqual((await entries(s, id, '?status=unmatched')).data.map((e) => e.amountOere), [99_000, 30_000]);
    const first = await entries(s, id, '?limit=3');
    assert.equal(first.data.length, 3);
    const second = await entries(s, id, `?limit=3&cursor=${first.meta.nextCursor}`);
    const third = await entries(s, id, `?limit=3&cursor=${second.meta.nextCursor}`);
    assert.deepEqual([...first.data, ...second.data, ...third.data].map((e) => e.id), list.data.map((e) => e.id));
    assert.equal(third.meta.nextCursor, null);
    // A cursor belongs to its filter.
    const other = await call(t.app, 'GET', `/v1/bank-statements/${id}/entries?status=matched&cursor=${first.meta.nextCursor}`, { key: s.org.apiKey });
    assert.equal(other.status, 400);
    assert.equal(other.body.error.code, 'invalid_cursor');
    const badStatus = await call(t.app, 'GET', `/v1/bank-statements/${id}/entries?status=paid`, { key: s.org.apiKey });
    assert.equal(badStatus.status, 400);
    assert.equal(badStatus.body.error.code, 'validation_failed');
  });

  it('keeps the remittance text encrypted at rest and out of the logs', async () => {
    const s = await setup();
    const secret = `Personlig besked ${Date.now()} fra Jens Hansen`;
    const res = await post(s, doc([stmt('ENC', [{ amount: '12.00', acctSvcrRef: 'ENC-1', bookingDate: yesterday(), txs: [{ ustrd: [secret] }] }])]));
    assert.equal(res.status, 201, res.raw);
    const [row] = await sql()<{ remittance_enc: Buffer }[]>`SELECT remittance_enc FROM bank_statement_entries WHERE organization_id = ${s.org.organizationId}`;
    assert.ok(row!.remittance_enc.length > 0);
    assert.ok(!row!.remittance_enc.toString('latin1').includes('Jens'));
    assert.equal((await entries(s, res.body.data.id)).data[0]!.remittance, secret);
    assert.ok(!t.logs().includes('Jens Hansen'));
    // No table holds it in clear text: not the entries, not the stored response of the import (encrypted too).
    const columns = await sql()<{ table_name: string; column_name: string }[]>`
      SELECT table_name, column_name FROM information_schema.columns
      WHERE table_schema = 'public' AND data_type IN ('text', 'jsonb', 'bytea', 'character varying', 'ARRAY')`;
    for (const { table_name, column_name } of columns) {
      const rows = await sql().unsafe(
        `SELECT 1 FROM "${table_name}" WHERE position($1 in "${column_name}"::text) > 0
           OR (pg_typeof("${column_name}")::text = 'bytea' AND position(convert_to($1, 'UTF8') in "${column_name}"::text::bytea) > 0) LIMIT 1`,
        ['Jens Hansen'],
      );
      assert.equal(rows.length, 0, `${table_name}.${column_name} holds the remittance in clear text`);
    }
  });

  it("leaves unmatched an entry dated after today, and one naming another organisation's payment id", async () => {
    const s = await setup();
    const other = await setup();
    const inv = await issued(s, 5_000);
    await issued(other, 1_000);
    const foreign = await issued(other, 6_000);
    // The other organisation's second invoice: this one has no invoice of that number, so its payment id names nothing here.
    assert.notEqual(foreign.paymentId, inv.paymentId);
    const res = await post(s, doc([stmt('EDGE', [
      { amount: kr(5_000), acctSvcrRef: 'E-1', bookingDate: addDays(today(), 1), txs: [{ ref: inv.paymentId }] },
      { amount: kr(6_000), acctSvcrRef: 'E-2', bookingDate: yesterday(), txs: [{ ustrd: [`+71<${foreign.paymentId}+85799665<`] }] },
    ])]));
    assert.equal(res.status, 201, res.raw);
    assert.deepEqual(res.body.data.counts, { entries: 2, matched: 0, unmatched: 2, duplicate: 0, ignored: 0 });
    assert.equal((await payments(s)).length, 0);
    assert.equal((await payments(other)).length, 0);
  });

  it('books entries paying one invoice in document order: the number rule sees the balance the earlier entry left', async () => {
    const s = await setup();
    const inv = await issued(s, 30_000);
    const res = await post(s, doc([stmt('TWO', [
      { amount: kr(10_000), acctSvcrRef: 'T-1', bookingDate: yesterday(), txs: [{ ref: inv.paymentId }] },
      { amount: kr(20_000), acctSvcrRef: 'T-2', bookingDate: yesterday(), txs: [{ ustrd: [`Rest af faktura ${inv.number}`] }] },
      // Paid by now: no longer open, so its number names no open invoice.
      { amount: kr(20_000), acctSvcrRef: 'T-3', bookingDate: yesterday(), txs: [{ ustrd: [`Faktura ${inv.number}`] }] },
    ])]));
    assert.equal(res.status, 201, res.raw);
    assert.deepEqual(res.body.data.counts, { entries: 3, matched: 2, unmatched: 1, duplicate: 0, ignored: 0 });
    assert.deepEqual((await payments(s)).map((p) => [p.amount_oere, p.outcome]), [[10_000, 'partial'], [20_000, 'paid_in_full']]);
    const after = (await call(t.app, 'GET', `/v1/invoices/${inv.id}`, { key: s.org.apiKey })).body.data;
    assert.deepEqual([after.status, after.balanceOere], ['paid', 0]);
    const timeline = (await call(t.app, 'GET', `/v1/invoices/${inv.id}/timeline`, { key: s.org.apiKey })).body.data as { code: string }[];
    assert.deepEqual(timeline.map((i) => i.code), ['created', 'issued', 'payment', 'payment']);
  });

  it('reads every version .02 to .08, each matching its invoice', async () => {
    const s = await setup();
    for (const v of VERSIONS) {
      const inv = await issued(s, 10_000 + v);
      const res = await post(s, doc([stmt(`V${v}`, [{ amount: kr(10_000 + v), ntryRef: `V${v}-1`, bookingDate: yesterday(), txs: [{ ref: inv.paymentId }] }])], v));
      assert.equal(res.status, 201, res.raw);
      assert.deepEqual(res.body.data.counts, { entries: 1, matched: 1, unmatched: 0, duplicate: 0, ignored: 0 }, `version ${v}`);
    }
    assert.equal((await payments(s)).length, VERSIONS.length);
  });

  it('matches each transaction of a batch entry on its own, and an entry without references by its text', async () => {
    const s = await setup();
    const a = await issued(s, 20_000);
    const b = await issued(s, 35_000);
    const res = await post(s, doc([stmt('BATCH', [
      { amount: kr(20_000 + 35_000 + 1_000), bookingDate: yesterday(), txs: [
        { amount: kr(20_000), ref: `+71<${a.paymentId}+85799665<` },
        { amount: kr(35_000), ustrd: [`Faktura ${b.number}`] },
        { amount: kr(1_000), ustrd: ['Drikkepenge'] },
      ] },
    ])]));
    assert.equal(res.status, 201, res.raw);
    assert.deepEqual(res.body.data.counts, { entries: 3, matched: 2, unmatched: 1, duplicate: 0, ignored: 0 });
    const list = await entries(s, res.body.data.id);
    assert.deepEqual(list.data.map((e) => [e.amountOere, e.status, e.invoiceId]), [[20_000, 'matched', a.id], [35_000, 'matched', b.id], [1_000, 'unmatched', null]]);
    assert.ok((await payments(s)).every((p) => /^DK5000400440116243:h:[0-9a-f]{64}\/[12]$/.test(p.booking_key)));
  });

  it('marks entries seen before as duplicate: the same statement twice, an overlapping one; nothing books twice', async () => {
    const s = await setup();
    const a = await issued(s, 10_000);
    const b = await issued(s, 20_000);
    const c = await issued(s, 30_000);
    const e1: EntryFixture = { amount: kr(10_000), acctSvcrRef: 'D-1', bookingDate: yesterday(), txs: [{ ref: a.paymentId }] };
    const e2: EntryFixture = { amount: kr(20_000), bookingDate: yesterday(), txs: [{ ustrd: [`${b.paymentId}`] }] };
    const e3: EntryFixture = { amount: kr(30_000), ntryRef: 'D-3', bookingDate: yesterday(), txs: [{ ref: c.paymentId }] };
    const first = await post(s, doc([stmt('DAY-1', [e1, e2])]));
    assert.deepEqual(first.body.data.counts, { entries: 2, matched: 2, unmatched: 0, duplicate: 0, ignored: 0 });
    const again = await post(s, doc([stmt('DAY-1', [e1, e2])]));
    assert.equal(again.status, 201);
    assert.notEqual(again.body.data.id, first.body.data.id);
    assert.deepEqual(again.body.data.counts, { entries: 2, matched: 0, unmatched: 0, duplicate: 2, ignored: 0 });
    assert.deepEqual((await entries(s, again.body.data.id)).data.map((e) => [e.status, e.invoiceId, e.paymentId]), [['duplicate', null, null], ['duplicate', null, null]]);
    // Another version of the message, overlapping: the new entry books, the old ones are duplicates.
    const overlap = await post(s, doc([stmt('DAY-1-2', [e2, e3, e1])], 3));
    assert.deepEqual(overlap.body.data.counts, { entries: 3, matched: 1, unmatched: 0, duplicate: 2, ignored: 0 });
    assert.deepEqual((await payments(s)).map((p) => p.invoice_id).sort(), [a.id, b.id, c.id].sort());
    // The same entry twice in one document: the second is a duplicate.
    const e4: EntryFixture = { amount: '1.00', acctSvcrRef: 'D-4', bookingDate: yesterday() };
    const twice = await post(s, doc([stmt('X-1', [e4]), stmt('X-2', [e4])]));
    assert.deepEqual(twice.body.data.counts, { entries: 2, matched: 0, unmatched: 1, duplicate: 1, ignored: 0 });
    // The same identity on another account is another entry.
    const otherAccount = await post(s, doc([stmt('Y', [e4], 'DK9520000123456789')]));
    assert.deepEqual(otherAccount.body.data.counts, { entries: 1, matched: 0, unmatched: 1, duplicate: 0, ignored: 0 });
  });

  it('books every payment once when 10 imports of one document race, with different keys', async () => {
    const s = await setup();
    const invoices = [];
    for (let i = 0; i < 5; i++) invoices.push(await issued(s, 10_000 * (i + 1)));
    const xml = doc([stmt('RACE', invoices.map((inv, i) => ({ amount: kr(10_000 * (i + 1)), acctSvcrRef: `RACE-${i}`, bookingDate: yesterday(), txs: [{ ref: inv.paymentId }] })))]);
    const results = await Promise.all(Array.from({ length: 10 }, () => post(s, xml)));
    assert.deepEqual(results.map((r) => r.status), Array(10).fill(201), results.map((r) => r.raw).join('\n'));
    const matched = results.reduce((n, r) => n + r.body.data.counts.matched, 0);
    const duplicate = results.reduce((n, r) => n + r.body.data.counts.duplicate, 0);
    assert.deepEqual([matched, duplicate], [5, 45]);
    const rows = await payments(s);
    assert.equal(rows.length, 5);
    assert.deepEqual(rows.map((r) => r.invoice_id).sort(), invoices.map((i) => i.id).sort());
    const firsts = await sql()<{ n: string }[]>`
      SELECT count(*) AS n FROM bank_statement_entries WHERE organization_id = ${s.org.organizationId} AND status <> 'duplicate'`;
    assert.equal(Number(firsts[0]!.n), 5);
  });

  it('books every payment once when overlapping statements race, their entries in different orders', async () => {
    const s = await setup();
    const invoices: Awaited<ReturnType<typeof issued>>[] = [];
    for (let i = 0; i < 6; i++) invoices.push(await issued(s, 1_000 * (i + 1)));
    const entry = (i: number): EntryFixture => ({ amount: kr(1_000 * (i + 1)), acctSvcrRef: `OV-${i}`, bookingDate: yesterday(), txs: [{ ref: invoices[i]!.paymentId }] });
    const a = doc([stmt('OV-A', [0, 1, 2, 3].map(entry))]);
    const b = doc([stmt('OV-B', [5, 4, 3, 2].map(entry))], 4);
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => post(s, i % 2 === 0 ? a : b)));
    assert.deepEqual(results.map((r) => r.status), Array(8).fill(201), results.map((r) => r.raw).join('\n'));
    assert.equal(results.reduce((n, r) => n + r.body.data.counts.matched, 0), 6);
    assert.equal(results.reduce((n, r) => n + r.body.data.counts.duplicate, 0), 8 * 4 - 6);
    const rows = await payments(s);
    assert.deepEqual(rows.map((r) => r.invoice_id).sort(), invoices.map((i) => i.id).sort());
  });

  it('replays the same Idempotency-Key, and refuses it for another document', async () => {
    const s = await setup();
    const inv = await issued(s, 7_500);
    const xml = doc([stmt('IDEM', [{ amount: kr(7_500), acctSvcrRef: 'I-1', bookingDate: yesterday(), txs: [{ ref: inv.paymentId }] }])]);
    const key = `bank-import-${Date.now()}`;
    const first = await post(s, xml, { idempotencyKey: key });
    assert.equal(first.status, 201);
    const replay = await post(s, xml, { idempotencyKey: key });
    assert.equal(replay.status, 201);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.headers.location, first.headers.location);
    assert.deepEqual(replay.body, { ...first.body, meta: { replayed: true } });
    assert.equal(await imports(s), 1);
    assert.equal((await payments(s)).length, 1);
    const conflict = await post(s, xml.replace('I-1', 'I-2'), { idempotencyKey: key });
    assert.equal(conflict.status, 409);
    assert.equal(conflict.body.error.code, 'idempotency_conflict');
    const missing = await call(t.app, 'POST', '/v1/bank-statements', { key: s.org.apiKey, body: xml, headers: { 'content-type': 'application/xml' }, idempotencyKey: null });
    assert.equal(missing.status, 400);
    assert.equal(missing.body.error.code, 'idempotency_key_missing');
  });

  describe('matching by hand', () => {
    it('books an unmatched entry on the invoice (200 with the entry); a second match is 422 entry_not_unmatched', async () => {
      const s = await setup();
      const inv = await issued(s, 50_000);
      const res = await post(s, doc([stmt('HAND', [
        { amount: kr(20_000), acctSvcrRef: 'H-1', bookingDate: yesterday(), txs: [{ ustrd: ['Kontant tak'] }] },
        { amount: kr(20_000), direction: 'DBIT', acctSvcrRef: 'H-2', bookingDate: yesterday() },
      ])]));
      const [unmatched, ignored] = (await entries(s, res.body.data.id)).data;
      assert.equal(unmatched!.status, 'unmatched');
      const match = (entryId: string, invoiceId: string, key?: string) =>
        call(t.app, 'POST', `/v1/bank-statement-entries/${entryId}/match`, { key: s.org.apiKey, body: { invoiceId }, ...(key ? { idempotencyKey: key } : {}) });
      const key = `bank-match-${Date.now()}`;
      const ok = await match(unmatched!.id, inv.id, key);
      assert.equal(ok.status, 200, ok.raw);
      assert.deepEqual(ok.body, {
        data: { ...unmatched, status: 'matched', invoiceId: inv.id, paymentId: ok.body.data.paymentId },
        meta: {},
      });
      const replay = await match(unmatched!.id, inv.id, key);
      assert.equal(replay.status, 200);
      assert.equal(replay.body.meta.replayed, true);
      const rows = await payments(s);
      assert.deepEqual(rows.map((r) => [r.invoice_id, r.amount_oere, r.source, r.payment_date, r.outcome]), [[inv.id, 20_000, 'bank', yesterday(), 'partial']]);
      assert.deepEqual((await entries(s, res.body.data.id)).data[0], ok.body.data);
      assert.deepEqual((await call(t.app, 'GET', `/v1/bank-statements/${res.body.data.id}`, { key: s.org.apiKey })).body.data.counts,
        { entries: 2, matched: 1, unmatched: 0, duplicate: 0, ignored: 1 });

      for (const entryId of [unmatched!.id, ignored!.id]) {
        const refused = await match(entryId, inv.id);
        assert.equal(refused.status, 422);
        assert.equal(refused.body.error.code, 'entry_not_unmatched');
      }
      assert.equal((await payments(s)).length, 1);
    });

    it("refuses an unknown or another organisation's invoice (404 invoice_not_found) and an invalid body (400)", async () => {
      const s = await setup();
      const other = await setup();
      const foreign = await issued(other, 1_000);
      const res = await post(s, doc([stmt('HAND-2', [{ amount: '10.00', acctSvcrRef: 'H2-1', bookingDate: yesterday() }])]));
      const [entry] = (await entries(s, res.body.data.id)).data;
      for (const invoiceId of [foreign.id, '0190a5c4-0000-7000-8000-000000000000']) {
        const r = await call(t.app, 'POST', `/v1/bank-statement-entries/${entry!.id}/match`, { key: s.org.apiKey, body: { invoiceId } });
        assert.equal(r.status, 404);
        assert.equal(r.body.error.code, 'invoice_not_found');
      }
      const bad = await call(t.app, 'POST', `/v1/bank-statement-entries/${entry!.id}/match`, { key: s.org.apiKey, body: { invoiceId: 'x', more: 1 } });
      assert.equal(bad.status, 400);
      assert.equal(bad.body.error.code, 'validation_failed');
      assert.equal((await entries(s, res.body.data.id)).data[0]!.status, 'unmatched');
    });
  });

  it("answers 404 for unknown, malformed and another organisation's ids", async () => {
    const s = await setup();
    const other = await setup();
    const res = await post(other, doc([stmt('OTHER', [{ amount: '10.00', acctSvcrRef: 'O-1', bookingDate: yesterday() }])]));
    const [entry] = (await entries(other, res.body.data.id)).data;
    const inv = await issued(s, 1_000);
    for (const id of [res.body.data.id, '0190a5c4-0000-7000-8000-000000000000', 'not-a-uuid']) {
      for (const url of [`/v1/bank-statements/${id}`, `/v1/bank-statements/${id}/entries`]) {
        const r = await call(t.app, 'GET', url, { key: s.org.apiKey });
        assert.equal(r.status, 404, url);
        assert.equal(r.body.error.code, 'bank_statement_not_found');
      }
    }
    for (const id of [entry!.id, '0190a5c4-0000-7000-8000-000000000000', 'not-a-uuid']) {
      const r = await call(t.app, 'POST', `/v1/bank-statement-entries/${id}/match`, { key: s.org.apiKey, body: { invoiceId: inv.id } });
      assert.equal(r.status, 404);
      assert.equal(r.body.error.code, 'bank_statement_entry_not_found');
    }
  });

  it('checks scopes: payments:write to import and match, payments:read to read', async () => {
    const s = await setup();
    const res = await post(s, doc([stmt('SCOPE', [{ amount: '10.00', acctSvcrRef: 'S-1', bookingDate: yesterday() }])]));
    const readOnly = await createTestKey(s.org, ['payments:read']);
    const refused = await post(s, doc([stmt('SCOPE-2', [])]), { key: readOnly });
    assert.equal(refused.status, 403);
    assert.deepEqual(refused.body.error.details, [{ path: '', message: 'required scope: payments:write' }]);
    assert.equal((await call(t.app, 'GET', `/v1/bank-statements/${res.body.data.id}`, { key: readOnly })).status, 200);
    const [entry] = (await entries(s, res.body.data.id)).data;
    const noMatch = await call(t.app, 'POST', `/v1/bank-statement-entries/${entry!.id}/match`, { key: readOnly, body: { invoiceId: entry!.id } });
    assert.equal(noMatch.status, 403);
    const invoicesOnly = await createTestKey(s.org, ['invoices:read']);
    for (const url of [`/v1/bank-statements/${res.body.data.id}`, `/v1/bank-statements/${res.body.data.id}/entries`]) {
      const r = await call(t.app, 'GET', url, { key: invoicesOnly });
      assert.equal(r.status, 403);
      assert.deepEqual(r.body.error.details, [{ path: '', message: 'required scope: payments:read' }]);
    }
    assert.equal((await call(t.app, 'GET', `/v1/bank-statements/${res.body.data.id}`)).status, 401);
  });

  describe('hostile and foreign input: 400/413/415, nothing booked, the service still answers', () => {
    let s: Setup;
    let inv: { id: string; paymentId: string };
    before(async () => {
      s = await setup();
      inv = await issued(s, 10_000);
    });

    async function refused(body: string, status: number, code: string, contentType = 'application/xml') {
      const res = await post(s, body, { contentType });
      assert.equal(res.status, status, res.raw.slice(0, 500));
      assert.equal(res.body.error.code, code);
      assert.equal(await imports(s), 0);
      assert.equal((await payments(s)).length, 0);
      const alive = await call(t.app, 'GET', '/v1', { key: s.org.apiKey });
      assert.equal(alive.status, 200);
      return res.body.error as { message: string; details?: { path: string; message: string }[] };
    }
    const valid = () => doc([stmt('H', [{ amount: '100.00', acctSvcrRef: 'HOST-1', bookingDate: yesterday(), txs: [{ ref: inv.paymentId }] }])]);
    let head: string;
    let body: string;
    before(() => {
      head = valid().slice(0, valid().indexOf('<Document'));
      body = valid().slice(valid().indexOf('<Document'));
    });

    it('billion laughs', async () => {
      const entities = `<!ENTITY lol "lol">${Array.from({ length: 9 }, (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i === 0 ? '' : i};`.repeat(10)}">`).join('')}`;
      const e = await refused(`${head}<!DOCTYPE Document [${entities}]>${body.replace('HOST-1', '&lol9;')}`, 400, 'invalid_statement');
      assert.match(e.details![0]!.message, /DOCTYPE/);
    });

    it('an external entity (SYSTEM file:///etc/passwd)', async () => {
      const e = await refused(`${head}<!DOCTYPE Document [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>${body.replace('HOST-1', '&xxe;')}`, 400, 'invalid_statement');
      assert.doesNotMatch(JSON.stringify(e), /root:/);
      await refused(body.replace('HOST-1', '&xxe;'), 400, 'invalid_statement');
    });

    it('a body over 5 MiB is 413 payload_too_large', async () => {
      const padding = `<!--${'x'.repeat(5 * 1024 * 1024)}-->`;
      await refused(body.replace('<BkToCstmrStmt>', `<BkToCstmrStmt>${padding}`), 413, 'payload_too_large');
    });

    it('100 000 nested elements within 5 MiB', async () => {
      const deep = body.replace('<BkToCstmrStmt>', `<BkToCstmrStmt>${'<a>'.repeat(100_000)}${'</a>'.repeat(100_000)}`);
      assert.ok(Buffer.byteLength(deep) < 5 * 1024 * 1024);
      const e = await refused(deep, 400, 'invalid_statement');
      assert.match(e.details![0]!.message, /deeper than 64/);
    });

    it('a body that is not XML, not UTF-8, or empty', async () => {
      const e = await refused('Dato;Beløb;Tekst\n2026-11-02;100,00;Faktura 1', 400, 'invalid_statement');
      assert.deepEqual(Object.keys(e.details![0]!), ['path', 'message']);
      const latin1 = await t.app.inject({
        method: 'POST', url: '/v1/bank-statements', payload: Buffer.from(valid().replace('HOST-1', 'HØST-1'), 'latin1'),
        headers: { authorization: `Bearer ${s.org.apiKey}`, 'content-type': 'application/xml', 'idempotency-key': `latin1-${Date.now()}` },
      });
      assert.equal(latin1.statusCode, 400);
      assert.deepEqual(JSON.parse(latin1.body).error.details, [{ path: '', message: 'The document is not UTF-8 text' }]);
      await refused('', 400, 'invalid_statement');
      const nul = await refused(valid().replace('HOST-1', 'HOST\u00001'), 400, 'invalid_statement');
      assert.match(nul.details![0]!.message, /NUL/);
    });

    it('a camt.054 and a pain.001', async () => {
      const camt054 = body.replace(/camt\.053\.001\.08/, 'camt.054.001.08').replace(/BkToCstmrStmt/g, 'BkToCstmrDbtCdtNtfctn').replace(/Stmt>/g, 'Ntfctn>');
      const e = await refused(camt054, 400, 'invalid_statement');
      assert.deepEqual(e.details, [{ path: '', message: 'The document is a camt.054.001.08 message, not a camt.053 bank statement (versions 001.02 to 001.08)' }]);
      await refused(
        '<?xml version="1.0" encoding="UTF-8"?><Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.001.001.09"><CstmrCdtTrfInitn><GrpHdr><MsgId>1</MsgId></GrpHdr></CstmrCdtTrfInitn></Document>',
        400, 'invalid_statement',
      );
    });

    it('JSON, or no content type, is 415 unsupported_media_type', async () => {
      await refused('{"statement":1}', 415, 'unsupported_media_type', 'application/json');
      await refused(valid(), 415, 'unsupported_media_type', 'text/plain');
    });

    it('after all of it, the document itself imports (application/xml with a charset, or text/xml)', async () => {
      const res = await post(s, valid(), { contentType: 'application/xml; charset=utf-8' });
      assert.equal(res.status, 201, res.raw);
      assert.equal(res.body.data.counts.matched, 1);
      assert.equal((await payments(s)).length, 1);
      const again = await post(s, valid(), { contentType: 'text/xml' });
      assert.equal(again.status, 201, again.raw);
      assert.equal(again.body.data.counts.duplicate, 1);
    });
  });
});
