import assert from 'node:assert/strict';
import type { EventType } from '../../contracts/events.ts';
import { recordEvent, type EventRecord } from '../../services/events/record-event.ts';
import { uuidv7 } from '../../services/shared/ids.ts';
import { uuidAt } from '../helpers/webhooks.ts';
import { call, createTestKey, createTestOrg, startTestApp, testDb, type TestApp, type TestOrg } from '../helpers/context.ts';

/** The pull feed: the event log in the webhook delivery shape, oldest first, per-entity sequence numbers. */
describe('GET /v1/events', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  const feed = (org: TestOrg, query = '') => call(t.app, 'GET', `/v1/events${query}`, { key: org.apiKey });
  // Any payload: these tests are about the feed, not about what each type carries.
  const record = (org: TestOrg, type: EventType, entityId: string, data: Record<string, unknown> = {}) =>
    testDb().db.tx((tx) => recordEvent(tx, { organizationId: org.organizationId, type, entityId, data } as EventRecord));

  it('lists what issuing and crediting wrote, in exactly the delivery shape, with no personal data @cluster', async () => {
    const org = await createTestOrg();
    const customer = await call(t.app, 'POST', '/v1/customers', {
      key: org.apiKey,
      body: { type: 'person', name: 'Jens Jensen', email: 'jens@example.dk', phone: '+4512345678', externalReference: 'K-1' },
    });
    const inv = await call(t.app, 'POST', '/v1/invoices?issue=true', {
      key: org.apiKey,
      body: { customerId: customer.body.data.id, externalReference: 'ERP-77', lines: [{ description: 'Vare', quantity: 2, unitPriceOere: 10000 }] },
    });
    assert.equal(inv.status, 201);
    const credit = await call(t.app, 'POST', `/v1/invoices/${inv.body.data.id}/credit`, { key: org.apiKey, body: { reason: 'Fejl i antal' } });
    assert.equal(credit.status, 201);

    const res = await feed(org);
    assert.equal(res.status, 200);
    assert.equal(res.body.meta.nextCursor, null);
    const items = res.body.data;
    assert.deepEqual(items.map((e: { type: string }) => e.type), ['invoice.issued', 'invoice.credited']);
    const [issued, credited] = items;
    assert.deepEqual(Object.keys(issued), ['id', 'type', 'timestamp', 'organizationId', 'invoice', 'data']);
    assert.deepEqual(issued.invoice, { id: inv.body.data.id, sekvensnummer: 1 });
    assert.deepEqual(credited.invoice, { id: inv.body.data.id, sekvensnummer: 2 });
    assert.equal(issued.organizationId, org.organizationId);
    assert.match(issued.timestamp, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    assert.equal(issued.data.grossOere, 25000);
    assert.equal(issued.data.externalReference, 'ERP-77');
    assert.equal(credited.data.creditNoteId, credit.body.data.id);
    const [row] = await testDb().db.sql<{ id: string }[]>`SELECT id FROM events WHERE entity_id = ${inv.body.data.id} AND sekvensnummer = 1`;
    assert.equal(issued.id, row!.id);
    const text = JSON.stringify(items);
    for (const personal of ['Jens', 'jens@example.dk', '12345678']) assert.ok(!text.includes(personal), `${personal} is not in the feed`);
  });

  it('numbers each entity 1, 2, 3… without gaps, and lists oldest first across entities', async () => {
    const org = await createTestOrg();
    const a = uuidv7();
    const b = uuidv7();
    const written: string[] = [];
    for (let i = 0; i < 5; i++) {
      written.push((await record(org, 'invoice.sent', a)).id);
      written.push((await record(org, 'customer.past_due', b)).id);
    }
    const items = (await feed(org)).body.data as { id: string; invoice?: { sekvensnummer: number }; customer?: { sekvensnummer: number } }[];
    assert.deepEqual(items.map((e) => e.id), written);
    assert.deepEqual(items.filter((e) => e.invoice).map((e) => e.invoice!.sekvensnummer), [1, 2, 3, 4, 5]);
    assert.deepEqual(items.filter((e) => e.customer).map((e) => e.customer!.sekvensnummer), [1, 2, 3, 4, 5]);
  });

  it('gives concurrent writers of one entity distinct, gap-free numbers @cluster', async () => {
    const org = await createTestOrg();
    const entity = uuidv7();
    const results = await Promise.allSettled(Array.from({ length: 8 }, () => record(org, 'invoice.sent', entity)));
    // Writers that do not hold the entity's row lock can collide on a number: the unique key refuses the second.
    const ok = results.filter((r) => r.status === 'fulfilled').length;
    const numbers = (await testDb().db.sql<{ s: number }[]>`SELECT sekvensnummer AS s FROM events WHERE entity_id = ${entity} ORDER BY 1`).map((r) => r.s);
    assert.deepEqual(numbers, Array.from({ length: ok }, (_, i) => i + 1));
  });

  it('pages with a cursor bound to its filters, and filters by type and since', async () => {
    const org = await createTestOrg();
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push((await record(org, i % 2 ? 'invoice.paid' : 'invoice.sent', uuidv7())).id);
    const p1 = await feed(org, '?limit=3');
    assert.deepEqual(p1.body.data.map((e: { id: string }) => e.id), ids.slice(0, 3));
    const p2 = await feed(org, `?limit=3&cursor=${encodeURIComponent(p1.body.meta.nextCursor)}`);
    assert.deepEqual(p2.body.data.map((e: { id: string }) => e.id), ids.slice(3, 6));
    const p3 = await feed(org, `?limit=3&cursor=${encodeURIComponent(p2.body.meta.nextCursor)}`);
    assert.deepEqual(p3.body.data.map((e: { id: string }) => e.id), ids.slice(6));
    assert.equal(p3.body.meta.nextCursor, null);

    const paid = await feed(org, '?type=invoice.paid');
    assert.deepEqual(paid.body.data.map((e: { id: string }) => e.id), [ids[1], ids[3], ids[5]]);
    const moved = await feed(org, `?type=invoice.paid&cursor=${encodeURIComponent(p1.body.meta.nextCursor)}`);
    assert.equal(moved.status, 400);
    assert.equal(moved.body.error.code, 'invalid_cursor');

    // An event from two days ago, and `since` as a date-time and as a date.
    const oldAt = Date.now() - 2 * 86_400_000;
    const oldId = uuidAt(oldAt);
    await testDb().db.sql`
      INSERT INTO events (id, organization_id, type, entity_family, entity_id, sekvensnummer, occurred_at, data)
      VALUES (${oldId}, ${org.organizationId}, 'invoice.sent', 'invoice', ${uuidv7()}, 1, ${new Date(oldAt)}, '{}'::jsonb)`;
    const all = await feed(org, '?limit=200');
    assert.equal(all.body.data[0].id, oldId, 'oldest first');
    const recent = await feed(org, `?since=${encodeURIComponent(new Date(Date.now() - 86_400_000).toISOString())}`);
    assert.deepEqual(recent.body.data.map((e: { id: string }) => e.id), ids);
    const sinceDate = new Date(oldAt - 86_400_000).toISOString().slice(0, 10);
    const byDate = await feed(org, `?since=${sinceDate}&limit=200`);
    assert.equal(byDate.body.data.length, 8);
    // An hour from now, written in UTC+01:00.
    const future = await feed(org, `?since=${encodeURIComponent(new Date(Date.now() + 2 * 3_600_000).toISOString().replace('Z', '+01:00'))}`);
    assert.deepEqual(future.body.data, []);
    // At the ends of the calendar, where an offset carries the instant into UTC year 0000 or 10000.
    const first = await feed(org, `?since=${encodeURIComponent('0001-01-01T00:00:00+14:00')}&limit=200`);
    assert.equal(first.status, 200, first.raw);
    assert.equal(first.body.data.length, 8);
    const last = await feed(org, `?since=${encodeURIComponent('9999-12-31T23:59:59-14:00')}`);
    assert.equal(last.status, 200, last.raw);
    assert.deepEqual(last.body.data, []);
  });

  it('refuses unknown types, bad since values and bad limits with 400', async () => {
    const org = await createTestOrg();
    for (const q of ['?type=invoice.deleted', '?type=webhook.ping', '?since=yesterday', '?since=2026-13-01', '?since=0000-01-01', '?since=0000-06-01T00:00:00Z', '?since=2016-12-31T23:59:60Z', '?since=2026-01-01T00:00:00%2B01', '?limit=0', '?limit=201', '?foo=1']) {
      const res = await feed(org, q);
      assert.equal(res.status, 400, q);
      assert.equal(res.body.error.code, 'validation_failed', q);
    }
  });

  it('shows only the caller’s organisation, and needs events:read', async () => {
    const a = await createTestOrg();
    const b = await createTestOrg();
    await record(a, 'invoice.sent', uuidv7());
    assert.deepEqual((await feed(b)).body.data, []);
    const noScope = await createTestKey(a, ['invoices:read']);
    const res = await call(t.app, 'GET', '/v1/events', { key: noScope });
    assert.equal(res.status, 403);
    assert.equal(res.body.error.code, 'insufficient_scope');
    const scoped = await createTestKey(a, ['events:read']);
    assert.equal((await call(t.app, 'GET', '/v1/events', { key: scoped })).body.data.length, 1);
  });

  it('keeps the log append-only', async () => {
    const org = await createTestOrg();
    const { id } = await record(org, 'invoice.sent', uuidv7());
    const { sql } = testDb().db;
    await assert.rejects(sql`UPDATE events SET data = '{}'::jsonb WHERE id = ${id}`, /append-only/);
    await assert.rejects(sql`DELETE FROM events WHERE id = ${id}`, /append-only/);
  });
});
