import assert from 'node:assert/strict';
import { call, createTestKey, createTestOrg, newIdempotencyKey, startTestApp, testDb, type TestApp, type TestOrg } from '../helpers/context.ts';
import { addDays, copenhagenToday } from '../../services/shared/clock.ts';
import { bookPayment } from '../../services/payments/book-payment.ts';
import { DomainError } from '../../services/shared/errors.ts';

/** One VAT-exempt line, so an invoice's gross is exactly the given amount. */
const line = (oere: number) => ({ description: 'Konsulentydelse', quantity: 1, unitPriceOere: oere, vatRateBps: 0, vatExemptionReason: 'ML13' });

describe('payments', () => {
  let t: TestApp;
  let org: TestOrg;
  let customerId: string;
  const today = () => copenhagenToday(new Date());
  const sql = () => testDb().db.sql;

  async function issued(grossOere: number, extra: Record<string, unknown> = {}, o: TestOrg = org, c: string = customerId) {
    const res = await call(t.app, 'POST', '/v1/invoices?issue=true', { key: o.apiKey, body: { customerId: c, lines: [line(grossOere)], ...extra } });
    assert.equal(res.status, 201, res.raw);
    return res.body.data as { id: string; number: number; grossOere: number; externalReference: string | null };
  }

  const pay = (invoiceId: string, amountOere: number, opts: { key?: string; idempotencyKey?: string; paymentDate?: string; o?: TestOrg } = {}) =>
    call(t.app, 'POST', `/v1/invoices/${invoiceId}/payments`, {
      key: opts.key ?? (opts.o ?? org).apiKey,
      body: { amountOere, paymentDate: opts.paymentDate ?? today() },
      ...(opts.idempotencyKey ? { idempotencyKey: opts.idempotencyKey } : {}),
    });

  const paymentRows = (invoiceId: string) =>
    sql()<{ id: string; amount_oere: number; outcome: string; surplus_oere: number; source: string; booking_key: string }[]>`
      SELECT id, amount_oere, outcome, surplus_oere, source, booking_key FROM payments WHERE invoice_id = ${invoiceId} ORDER BY id`;

  const eventsOf = async (entityId: string) =>
    (await sql()<{ type: string; entity_family: string; sekvensnummer: number; data: Record<string, unknown> }[]>`
      SELECT type, entity_family, sekvensnummer, data FROM events WHERE entity_id = ${entityId} ORDER BY sekvensnummer`).map((e) => ({ ...e }));

  before(async () => {
    t = await startTestApp();
    org = await createTestOrg({ name: 'Betaling ApS' });
    customerId = (await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: { type: 'company', name: 'Kunde A/S' } })).body.data.id;
  });
  after(() => t.close());

  describe('POST /v1/invoices/{id}/payments', () => {
    it('books a partial payment, then the rest: outcomes, balance, status paid, events and timeline @cluster', async () => {
      const inv = await issued(100_000, { externalReference: 'erp-100' });
      const first = await pay(inv.id, 30_000, { paymentDate: addDays(today(), -3) });
      assert.equal(first.status, 201, first.raw);
      assert.equal(first.body.meta.outcome, 'partial');
      const paymentId = first.body.meta.paymentId;
      assert.match(paymentId, /^[0-9a-f-]{36}$/);
      assert.equal(first.headers.location, `/v1/payments/${paymentId}`);
      assert.equal(first.body.meta.replayed, undefined);
      const d = first.body.data;
      assert.equal(d.id, inv.id);
      assert.equal(d.status, 'issued');
      assert.deepEqual([d.grossOere, d.paidOere, d.creditedOere, d.reminderFeeOere, d.balanceOere], [100_000, 30_000, 0, 0, 70_000]);
      assert.equal(d.lines.length, 1);

      const second = await pay(inv.id, 70_000);
      assert.equal(second.status, 201);
      assert.equal(second.body.meta.outcome, 'paid_in_full');
      assert.equal(second.body.data.status, 'paid');
      assert.deepEqual([second.body.data.paidOere, second.body.data.balanceOere], [100_000, 0]);
      // The response is the invoice as any later read shows it.
      const read = await call(t.app, 'GET', `/v1/invoices/${inv.id}`, { key: org.apiKey });
      assert.deepEqual(read.body.data, second.body.data);

      const rows = await paymentRows(inv.id);
      assert.deepEqual(rows.map((r) => [r.amount_oere, r.outcome, r.surplus_oere, r.source]), [[30_000, 'partial', 0, 'manual'], [70_000, 'paid_in_full', 0, 'manual']]);
      const received = await eventsOf(paymentId);
      assert.deepEqual(received, [{
        type: 'payment.received', entity_family: 'payment', sekvensnummer: 1,
        data: { invoiceId: inv.id, amountOere: 30_000, paymentDate: addDays(today(), -3), source: 'manual', externalReference: 'erp-100' },
      }]);
      const invoiceEvents = await eventsOf(inv.id);
      assert.deepEqual(invoiceEvents.map((e) => [e.type, e.sekvensnummer]), [['invoice.issued', 1], ['invoice.paid', 2]]);
      assert.deepEqual(invoiceEvents[1]!.data, {
        invoiceId: inv.id, number: inv.number, paymentId: second.body.meta.paymentId, paidOere: 100_000, balanceOere: 0, externalReference: 'erp-100',
      });
      const timeline = await call(t.app, 'GET', `/v1/invoices/${inv.id}/timeline`, { key: org.apiKey });
      assert.deepEqual(timeline.body.data.map((i: { code: string }) => i.code), ['created', 'issued', 'payment', 'payment']);
      assert.deepEqual(timeline.body.data[2].data, { paymentId, amountOere: 30_000, paymentDate: addDays(today(), -3), source: 'manual', outcome: 'partial' });
    });

    it('keeps an overpayment as customer credit (registered), and a payment on a settled invoice too', async () => {
      const inv = await issued(50_000);
      const over = await pay(inv.id, 80_000);
      assert.equal(over.status, 201);
      assert.equal(over.body.meta.outcome, 'registered');
      assert.equal(over.body.data.status, 'paid');
      assert.deepEqual([over.body.data.paidOere, over.body.data.balanceOere], [80_000, -30_000]);
      const again = await pay(inv.id, 1_000);
      assert.equal(again.body.meta.outcome, 'registered');
      assert.deepEqual([again.body.data.status, again.body.data.balanceOere], ['paid', -31_000]);
      const rows = await paymentRows(inv.id);
      assert.deepEqual(rows.map((r) => [r.outcome, r.surplus_oere]), [['registered', 30_000], ['registered', 1_000]]);
      const paymentRead = await call(t.app, 'GET', `/v1/payments/${again.body.meta.paymentId}`, { key: org.apiKey });
      assert.equal(paymentRead.body.data.surplusOere, 1_000);
      // invoice.paid is written once, on the transition to paid.
      assert.deepEqual((await eventsOf(inv.id)).map((e) => e.type), ['invoice.issued', 'invoice.paid']);
    });

    it('registers a payment on a credited invoice as credit, and the invoice stays issued', async () => {
      const inv = await issued(40_000);
      const partial = await pay(inv.id, 10_000);
      assert.equal(partial.body.meta.outcome, 'partial');
      const credit = await call(t.app, 'POST', `/v1/invoices/${inv.id}/credit`, { key: org.apiKey, body: { reason: 'Annulleret' } });
      assert.equal(credit.status, 201);
      const after = await pay(inv.id, 5_000);
      assert.equal(after.status, 201);
      assert.equal(after.body.meta.outcome, 'registered');
      assert.equal(after.body.data.status, 'issued');
      assert.deepEqual([after.body.data.paidOere, after.body.data.creditedOere, after.body.data.balanceOere], [15_000, 40_000, -15_000]);
      assert.deepEqual((await eventsOf(inv.id)).map((e) => e.type), ['invoice.issued', 'invoice.credited']);
    });

    it('moves an overdue or collections invoice to paid when its balance reaches 0', async () => {
      for (const status of ['overdue', 'collections']) {
        const inv = await issued(20_000);
        await sql()`UPDATE invoices SET status = ${status} WHERE id = ${inv.id}`;
        const part = await pay(inv.id, 5_000);
        assert.deepEqual([part.body.meta.outcome, part.body.data.status], ['partial', status]);
        const rest = await pay(inv.id, 15_000);
        assert.deepEqual([rest.body.meta.outcome, rest.body.data.status], ['paid_in_full', 'paid']);
      }
    });

    it('accepts today as the payment date and refuses a later one (payment_date_in_future)', async () => {
      const inv = await issued(10_000);
      const future = await pay(inv.id, 1_000, { paymentDate: addDays(today(), 1) });
      assert.equal(future.status, 422);
      assert.equal(future.body.error.code, 'payment_date_in_future');
      assert.deepEqual(future.body.error.details, [{ path: '/paymentDate', message: `must not be after ${today()}` }]);
      assert.equal((await paymentRows(inv.id)).length, 0);
      const now = await pay(inv.id, 1_000, { paymentDate: today() });
      assert.equal(now.status, 201);
    });

    it('refuses drafts (invoice_not_issued) and credit notes (credit_note_not_payable)', async () => {
      const draft = (await call(t.app, 'POST', '/v1/invoices', { key: org.apiKey, body: { customerId, lines: [line(10_000)] } })).body.data;
      const res = await pay(draft.id, 1_000);
      assert.equal(res.status, 422);
      assert.equal(res.body.error.code, 'invoice_not_issued');
      const inv = await issued(10_000);
      const note = (await call(t.app, 'POST', `/v1/invoices/${inv.id}/credit`, { key: org.apiKey, body: { reason: 'Fejl' } })).body.data;
      const onNote = await pay(note.id, 1_000);
      assert.equal(onNote.status, 422);
      assert.equal(onNote.body.error.code, 'credit_note_not_payable');
      const [count] = await sql()<{ n: number }[]>`SELECT count(*)::int AS n FROM payments WHERE invoice_id IN (${draft.id}, ${note.id})`;
      assert.equal(count!.n, 0);
    });

    it("answers 404 invoice_not_found for unknown ids, non-UUIDs and another organisation's invoice", async () => {
      const other = await createTestOrg();
      const otherCustomer = (await call(t.app, 'POST', '/v1/customers', { key: other.apiKey, body: { type: 'person', name: 'Anden' } })).body.data.id;
      const foreign = await issued(10_000, {}, other, otherCustomer);
      for (const id of [foreign.id, '01900000-0000-7000-8000-000000000000', 'not-a-uuid']) {
        const res = await pay(id, 1_000);
        assert.equal(res.status, 404, id);
        assert.equal(res.body.error.code, 'invoice_not_found');
        const list = await call(t.app, 'GET', `/v1/invoices/${id}/payments`, { key: org.apiKey });
        assert.equal(list.status, 404);
        assert.equal(list.body.error.code, 'invoice_not_found');
      }
      assert.equal((await paymentRows(foreign.id)).length, 0);
    });

    it('validates the body: amount 1..100000000000 øre, a real date, nothing else (400, key not consumed)', async () => {
      const inv = await issued(10_000);
      const key = newIdempotencyKey();
      for (const [body, path] of [
        [{ amountOere: 0, paymentDate: today() }, '/amountOere'],
        [{ amountOere: 100_000_000_001, paymentDate: today() }, '/amountOere'],
        [{ amountOere: 10.5, paymentDate: today() }, '/amountOere'],
        [{ amountOere: 100, paymentDate: '2026-02-30' }, '/paymentDate'],
        // ISO 8601's year 0 is no year PostgreSQL can store.
        [{ amountOere: 100, paymentDate: '0000-06-01' }, '/paymentDate'],
        [{ amountOere: 100 }, '/paymentDate'],
        [{ amountOere: 100, paymentDate: today(), source: 'card' }, '/source'],
      ] as const) {
        const res = await call(t.app, 'POST', `/v1/invoices/${inv.id}/payments`, { key: org.apiKey, body, idempotencyKey: key });
        assert.equal(res.status, 400, JSON.stringify(body));
        assert.equal(res.body.error.code, 'validation_failed');
        assert.equal(res.body.error.details[0].path, path);
      }
      const ok = await pay(inv.id, 10_000, { idempotencyKey: key });
      assert.equal(ok.status, 201);
      assert.equal(ok.body.meta.outcome, 'paid_in_full');
    });

    it('needs payments:write to register and payments:read to list', async () => {
      const inv = await issued(10_000);
      const readOnly = await createTestKey(org, ['payments:read']);
      const refused = await pay(inv.id, 1_000, { key: readOnly });
      assert.equal(refused.status, 403);
      assert.equal(refused.body.error.code, 'insufficient_scope');
      assert.deepEqual(refused.body.error.details, [{ path: '', message: 'required scope: payments:write' }]);
      const invoicesOnly = await createTestKey(org, ['invoices:read', 'invoices:write']);
      for (const url of [`/v1/invoices/${inv.id}/payments`, '/v1/payments']) {
        const res = await call(t.app, 'GET', url, { key: invoicesOnly });
        assert.equal(res.status, 403, url);
        assert.deepEqual(res.body.error.details, [{ path: '', message: 'required scope: payments:read' }]);
      }
      assert.equal((await call(t.app, 'GET', `/v1/invoices/${inv.id}/payments`, { key: readOnly })).status, 200);
      assert.equal((await paymentRows(inv.id)).length, 0);
    });
  });

  describe('booking on the Idempotency-Key', () => {
    it('replays the same request and refuses the same key with another amount (idempotency_conflict)', async () => {
      const inv = await issued(10_000);
      const key = newIdempotencyKey();
      const first = await pay(inv.id, 4_000, { idempotencyKey: key });
      const again = await pay(inv.id, 4_000, { idempotencyKey: key });
      assert.equal(again.status, 201);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.equal(again.body.meta.replayed, true);
      assert.equal(again.body.meta.paymentId, first.body.meta.paymentId);
      const other = await pay(inv.id, 5_000, { idempotencyKey: key });
      assert.equal(other.status, 409);
      assert.equal(other.body.error.code, 'idempotency_conflict');
      assert.equal((await paymentRows(inv.id)).length, 1);
    });

    it('never books a key twice, even after its stored response has expired', async () => {
      const inv = await issued(10_000);
      const key = newIdempotencyKey();
      const first = await pay(inv.id, 6_000, { idempotencyKey: key, paymentDate: addDays(today(), -1) });
      assert.equal(first.status, 201);
      const purge = () => sql()`DELETE FROM idempotency_keys WHERE organization_id = ${org.organizationId} AND key = ${key}`;
      assert.equal((await purge()).count, 1);

      const late = await pay(inv.id, 6_000, { idempotencyKey: key, paymentDate: addDays(today(), -1) });
      assert.equal(late.status, 201);
      assert.equal(late.headers['idempotent-replayed'], 'true');
      assert.equal(late.headers.location, first.headers.location);
      assert.deepEqual(late.body.meta, { outcome: 'partial', paymentId: first.body.meta.paymentId, replayed: true });
      assert.deepEqual([late.body.data.paidOere, late.body.data.balanceOere], [6_000, 4_000]);
      assert.equal((await paymentRows(inv.id)).length, 1);

      // With the store gone again, the payment's own key still tells a different request apart.
      await purge();
      const otherInvoice = await issued(10_000);
      for (const [invoiceId, amount, date] of [
        [inv.id, 7_000, addDays(today(), -1)],
        [inv.id, 6_000, today()],
        [otherInvoice.id, 6_000, addDays(today(), -1)],
        // A key that booked a payment is taken, also on an id that is no invoice at all.
        ['not-a-uuid', 6_000, addDays(today(), -1)],
        ['01900000-0000-7000-8000-000000000000', 6_000, addDays(today(), -1)],
      ] as const) {
        const res = await pay(invoiceId, amount, { idempotencyKey: key, paymentDate: date });
        assert.equal(res.status, 409, `${invoiceId} ${amount} ${date}`);
        assert.equal(res.body.error.code, 'idempotency_conflict');
      }
      assert.equal((await paymentRows(inv.id)).length, 1);
      assert.equal((await paymentRows(otherInvoice.id)).length, 0);
    });

    it('20 parallel registrations with one key book one payment @cluster', async () => {
      const inv = await issued(10_000);
      const key = newIdempotencyKey();
      const results = await Promise.all(Array.from({ length: 20 }, () => pay(inv.id, 2_500, { idempotencyKey: key })));
      const created = results.filter((r) => r.status === 201);
      const busy = results.filter((r) => r.status === 409);
      assert.equal(created.length + busy.length, 20, JSON.stringify(results.map((r) => r.status)));
      assert.ok(created.length >= 1);
      for (const r of busy) assert.equal(r.body.error.code, 'idempotency_in_progress');
      assert.equal(new Set(created.map((r) => r.body.meta.paymentId)).size, 1);
      const rows = await paymentRows(inv.id);
      assert.equal(rows.length, 1);
      assert.equal(rows[0]!.booking_key, key);
      const read = (await call(t.app, 'GET', `/v1/invoices/${inv.id}`, { key: org.apiKey })).body.data;
      assert.deepEqual([read.paidOere, read.balanceOere], [2_500, 7_500]);
    });

    it('20 parallel registrations with their own keys on one invoice: exact balance, one paid_in_full', async () => {
      // Unequal amounts summing to the gross: whichever is booked last settles the invoice.
      const amounts = Array.from({ length: 20 }, (_, i) => 1_000 + i * 100);
      const gross = amounts.reduce((a, b) => a + b, 0);
      const inv = await issued(gross);
      const results = await Promise.all(amounts.map((a) => pay(inv.id, a)));
      assert.deepEqual(results.map((r) => r.status), Array(20).fill(201));
      const outcomes = results.map((r) => r.body.meta.outcome as string);
      assert.equal(outcomes.filter((o) => o === 'paid_in_full').length, 1);
      assert.equal(outcomes.filter((o) => o === 'partial').length, 19);
      // The balances the responses report are the running balance in booking order: all different, the last 0.
      const balances = results.map((r) => r.body.data.balanceOere as number).sort((a, b) => b - a);
      assert.equal(new Set(balances).size, 20);
      assert.equal(balances[19], 0);
      const read = (await call(t.app, 'GET', `/v1/invoices/${inv.id}`, { key: org.apiKey })).body.data;
      assert.deepEqual([read.status, read.paidOere, read.balanceOere], ['paid', gross, 0]);
      assert.deepEqual((await eventsOf(inv.id)).map((e) => [e.type, e.sekvensnummer]), [['invoice.issued', 1], ['invoice.paid', 2]]);

      // Newest first is booking order reversed, by id and by createdAt alike; the timeline tells it in booking order.
      const balanceAfter = new Map(results.map((r) => [r.body.meta.paymentId as string, r.body.data.balanceOere as number]));
      const listed = (await call(t.app, 'GET', `/v1/invoices/${inv.id}/payments`, { key: org.apiKey })).body.data as { id: string; createdAt: string }[];
      const booked = [...listed].reverse();
      assert.deepEqual(booked.map((p) => balanceAfter.get(p.id)), [...balances].sort((a, b) => b - a), 'oldest first, each booking lowers the balance');
      assert.deepEqual(booked.map((p) => p.createdAt), booked.map((p) => p.createdAt).sort(), 'createdAt follows booking order');
      const timeline = (await call(t.app, 'GET', `/v1/invoices/${inv.id}/timeline?limit=50`, { key: org.apiKey })).body.data as { code: string; at: string; data: { paymentId?: string } }[];
      const paymentEntries = timeline.filter((e) => e.code === 'payment');
      assert.deepEqual(paymentEntries.map((e) => e.data.paymentId), booked.map((p) => p.id));
      assert.deepEqual(paymentEntries.map((e) => e.at), booked.map((p) => p.createdAt));
    });

    it('20 parallel equal payments worth twice the gross: 9 partial, 1 paid_in_full, 10 registered, balance −gross', async () => {
      const inv = await issued(20_000);
      const results = await Promise.all(Array.from({ length: 20 }, () => pay(inv.id, 2_000)));
      assert.deepEqual(results.map((r) => r.status), Array(20).fill(201));
      const count = (o: string) => results.filter((r) => r.body.meta.outcome === o).length;
      assert.deepEqual([count('partial'), count('paid_in_full'), count('registered')], [9, 1, 10]);
      const read = (await call(t.app, 'GET', `/v1/invoices/${inv.id}`, { key: org.apiKey })).body.data;
      assert.deepEqual([read.status, read.paidOere, read.balanceOere], ['paid', 40_000, -20_000]);
      const rows = await paymentRows(inv.id);
      assert.equal(rows.reduce((s, r) => s + r.surplus_oere, 0), 20_000);
    });
  });

  describe('bookPayment for provider callbacks', () => {
    it('books a provider payment id once when the same callback is handled twice at the same time @cluster', async () => {
      const inv = await issued(30_000);
      const { db } = testDb();
      const input = { source: 'card' as const, bookingKey: `pi_${newIdempotencyKey()}`, amountOere: 30_000, paymentDate: today() };
      // No mutate, no key lock: two transactions race on the unique booking key alone.
      const results = await Promise.all([0, 1].map(() => db.tx((tx) => bookPayment(tx, t.deps, org.organizationId, inv.id, input))));
      assert.deepEqual(results.map((r) => r.replayed).sort(), [false, true]);
      assert.equal(results[0]!.payment.id, results[1]!.payment.id);
      assert.deepEqual(results.map((r) => r.outcome), ['paid_in_full', 'paid_in_full']);
      const rows = await paymentRows(inv.id);
      assert.deepEqual(rows.map((r) => [r.source, r.booking_key]), [['card', input.bookingKey]]);
      const listed = await call(t.app, 'GET', `/v1/invoices/${inv.id}/payments`, { key: org.apiKey });
      assert.equal(listed.body.data[0].source, 'card');
      assert.equal(listed.body.data[0].providerPaymentId, input.bookingKey);
      const received = await eventsOf(rows[0]!.id);
      assert.deepEqual(received.map((e) => [e.type, e.data.source]), [['payment.received', 'card']]);

      // The same provider id with another amount is not the same payment.
      await assert.rejects(
        db.tx((tx) => bookPayment(tx, t.deps, org.organizationId, inv.id, { ...input, amountOere: 1 })),
        (err: unknown) => err instanceof DomainError && err.code === 'idempotency_conflict',
      );
      // A manual payment whose Idempotency-Key happens to equal the provider id is another channel's key.
      const manual = await pay(inv.id, 500, { idempotencyKey: input.bookingKey });
      assert.equal(manual.status, 201);
      assert.equal(manual.body.meta.outcome, 'registered');
    });
  });

  describe('lists', () => {
    it('GET /v1/invoices/{id}/payments lists newest first with cursor pages', async () => {
      const inv = await issued(100_000);
      const ids: string[] = [];
      for (const amount of [1_000, 2_000, 3_000, 4_000, 5_000]) ids.push((await pay(inv.id, amount)).body.meta.paymentId);
      const first = await call(t.app, 'GET', `/v1/invoices/${inv.id}/payments?limit=2`, { key: org.apiKey });
      assert.equal(first.status, 200);
      assert.deepEqual(first.body.data.map((p: { id: string }) => p.id), [ids[4], ids[3]]);
      const p = first.body.data[0];
      assert.deepEqual(Object.keys(p).sort(), [
        'amountOere', 'createdAt', 'customerId', 'id', 'invoiceId', 'outcome', 'paymentDate', 'providerPaymentId', 'source', 'surplusOere',
      ]);
      assert.deepEqual(
        { ...p, createdAt: undefined },
        {
          id: ids[4], invoiceId: inv.id, customerId, source: 'manual', amountOere: 5_000, paymentDate: today(), outcome: 'partial',
          surplusOere: 0, providerPaymentId: null, createdAt: undefined,
        },
      );
      const second = await call(t.app, 'GET', `/v1/invoices/${inv.id}/payments?limit=2&cursor=${first.body.meta.nextCursor}`, { key: org.apiKey });
      assert.deepEqual(second.body.data.map((x: { id: string }) => x.id), [ids[2], ids[1]]);
      const third = await call(t.app, 'GET', `/v1/invoices/${inv.id}/payments?limit=2&cursor=${second.body.meta.nextCursor}`, { key: org.apiKey });
      assert.deepEqual(third.body.data.map((x: { id: string }) => x.id), [ids[0]]);
      assert.equal(third.body.meta.nextCursor, null);
      // A cursor belongs to its invoice's list.
      const other = await issued(1_000);
      const carried = await call(t.app, 'GET', `/v1/invoices/${other.id}/payments?cursor=${first.body.meta.nextCursor}`, { key: org.apiKey });
      assert.equal(carried.status, 400);
      assert.equal(carried.body.error.code, 'invalid_cursor');
      const none = await call(t.app, 'GET', `/v1/invoices/${other.id}/payments`, { key: org.apiKey });
      assert.deepEqual(none.body, { data: [], meta: { nextCursor: null } });
    });

    it("GET /v1/payments lists the organisation's payments from all invoices, newest first, never another's", async () => {
      const fresh = await createTestOrg();
      const c = (await call(t.app, 'POST', '/v1/customers', { key: fresh.apiKey, body: { type: 'person', name: 'P' } })).body.data.id;
      const a = await issued(10_000, {}, fresh, c);
      const b = await issued(10_000, {}, fresh, c);
      const ids: string[] = [];
      for (const inv of [a, b, a]) ids.push((await pay(inv.id, 1_000, { o: fresh })).body.meta.paymentId);
      await pay((await issued(1_000)).id, 1_000); // another organisation's payment
      const all = await call(t.app, 'GET', '/v1/payments', { key: fresh.apiKey });
      assert.equal(all.status, 200);
      assert.deepEqual(all.body.data.map((p: { id: string }) => p.id), [ids[2], ids[1], ids[0]]);
      assert.deepEqual(all.body.data.map((p: { invoiceId: string }) => p.invoiceId), [a.id, b.id, a.id]);
      assert.equal(all.body.meta.nextCursor, null);
      const page1 = await call(t.app, 'GET', '/v1/payments?limit=2', { key: fresh.apiKey });
      // A payment booked while paging sorts before the cursor: the next page neither skips nor repeats one.
      await pay(b.id, 1_000, { o: fresh });
      const page2 = await call(t.app, 'GET', `/v1/payments?limit=2&cursor=${page1.body.meta.nextCursor}`, { key: fresh.apiKey });
      assert.deepEqual([...page1.body.data, ...page2.body.data].map((p: { id: string }) => p.id), [ids[2], ids[1], ids[0]]);
      const forged = await call(t.app, 'GET', `/v1/payments?cursor=${page1.body.meta.nextCursor}`, { key: org.apiKey });
      assert.equal(forged.status, 400);
      assert.equal(forged.body.error.code, 'invalid_cursor');
      const unknownParam = await call(t.app, 'GET', '/v1/payments?invoiceId=x', { key: fresh.apiKey });
      assert.equal(unknownParam.status, 400);
      assert.equal(unknownParam.body.error.code, 'validation_failed');
    });

    it('GET /v1/payments/{id} reads one payment; unknown or foreign ids are payment_not_found', async () => {
      const inv = await issued(10_000);
      const booked = await pay(inv.id, 2_000);
      const res = await call(t.app, 'GET', `/v1/payments/${booked.body.meta.paymentId}`, { key: org.apiKey });
      assert.equal(res.status, 200);
      assert.equal(res.body.data.id, booked.body.meta.paymentId);
      assert.equal(res.body.data.amountOere, 2_000);
      const other = await createTestOrg();
      for (const id of [booked.body.meta.paymentId, '01900000-0000-7000-8000-000000000000', 'nope']) {
        const r = await call(t.app, 'GET', `/v1/payments/${id}`, { key: id === 'nope' ? org.apiKey : other.apiKey });
        assert.equal(r.status, 404, id);
        assert.equal(r.body.error.code, 'payment_not_found');
      }
    });
  });
});
