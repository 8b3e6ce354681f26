import assert from 'node:assert/strict';
import { uuidv7 } from '../../services/shared/ids.ts';
import { uuidAt } from '../helpers/webhooks.ts';
import { call, createTestOrg, startTestApp, testDb, type TestApp, type TestOrg } from '../helpers/context.ts';

const DAY = 86_400_000;

/** An event as the log holds it, `ageMs` old (a direct insert: the log has no API to backdate). */
async function insertEvent(org: TestOrg, type: string, ageMs = 0): Promise<string> {
  const at = Date.now() - ageMs;
  const id = uuidAt(at);
  await testDb().db.sql`
    INSERT INTO events (id, organization_id, type, entity_family, entity_id, sekvensnummer, occurred_at, data)
    VALUES (${id}, ${org.organizationId}, ${type}, ${type.split('.')[0]!}, ${uuidv7()}, 1, ${new Date(at)}, ${testDb().db.sql.json({ n: 1 })})`;
  return id;
}

async function setDelivery(endpointId: string, org: TestOrg, eventId: string, status: string, attempts: number): Promise<void> {
  const waiting = status === 'queued' || status === 'failed';
  await testDb().db.sql`
    INSERT INTO webhook_deliveries (id, organization_id, endpoint_id, event_id, message_id, status, attempts, next_attempt_at)
    VALUES (${uuidv7()}, ${org.organizationId}, ${endpointId}, ${eventId}, ${eventId}, ${status}, ${attempts}, ${waiting ? new Date() : null})`;
}

/**
 * The events these tests insert stand for history; their live delivery is not under test here. The trigger put the
 * ones an active endpoint wants into the relay's outbox: clear it, so that no relay of a later test file sends them.
 */
const clearOutbox = (org: TestOrg) => testDb().db.sql`DELETE FROM event_outbox WHERE organization_id = ${org.organizationId}`;

const deliveries = async (endpointId: string) =>
  (
    await testDb().db.sql<{ event_id: string; status: string; round: number; attempts: number }[]>`
      SELECT event_id, status, round, attempts FROM webhook_deliveries WHERE endpoint_id = ${endpointId} ORDER BY event_id`
  ).map((r) => ({ ...r }));

/**
 * Replay semantics (docs/api-conventions.md, "Events, webhooks and the test clock", Replay): what is re-queued, what is
 * enqueued, what is never touched, and the limits.
 */
describe('webhook replay', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ webhooks: { allowLoopback: true } });
  });
  after(() => t.close());

  const endpoint = async (org: TestOrg, eventTypes: string[]) =>
    (await call(t.app, 'POST', '/v1/webhook-endpoints', { key: org.apiKey, body: { url: 'http://127.0.0.1:9/hook', eventTypes } })).body.data.id as string;
  const replay = (org: TestOrg, id: string, since: unknown) => call(t.app, 'POST', `/v1/webhook-endpoints/${id}/replay`, { key: org.apiKey, body: { since } });

  it('re-queues failed and given-up deliveries, enqueues events never queued, never touches delivered or queued ones', async () => {
    const org = await createTestOrg();
    const id = await endpoint(org, ['invoice.issued', 'invoice.paid']);
    const old = await insertEvent(org, 'invoice.issued', 3 * DAY);
    const delivered = await insertEvent(org, 'invoice.issued', DAY);
    const failed = await insertEvent(org, 'invoice.paid', DAY);
    const givenUp = await insertEvent(org, 'invoice.issued', DAY);
    const queued = await insertEvent(org, 'invoice.issued', DAY);
    const never = await insertEvent(org, 'invoice.paid', DAY);
    const otherType = await insertEvent(org, 'invoice.sent', DAY);
    await setDelivery(id, org, old, 'given-up', 8);
    await setDelivery(id, org, delivered, 'delivered', 1);
    await setDelivery(id, org, failed, 'failed', 3);
    await setDelivery(id, org, givenUp, 'given-up', 8);
    await setDelivery(id, org, queued, 'queued', 0);

    await clearOutbox(org);
    const since = new Date(Date.now() - 2 * DAY).toISOString();
    const res = await replay(org, id, since);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { data: { requeued: 2, enqueued: 1, possiblyMore: false }, meta: {} });
    // Events inserted within one millisecond have ids in no particular order: compare in the query's order (event_id).
    const expected = [
      { event_id: old, status: 'given-up', round: 1, attempts: 8 },
      { event_id: delivered, status: 'delivered', round: 1, attempts: 1 },
      { event_id: failed, status: 'queued', round: 2, attempts: 0 },
      { event_id: givenUp, status: 'queued', round: 2, attempts: 0 },
      { event_id: queued, status: 'queued', round: 1, attempts: 0 },
      { event_id: never, status: 'queued', round: 1, attempts: 0 },
    ].sort((a, b) => (a.event_id < b.event_id ? -1 : 1));
    assert.deepEqual(await deliveries(id), expected);
    assert.ok(!(await deliveries(id)).some((d) => d.event_id === otherType), 'a type the endpoint does not take is not enqueued');
    const wakes = await testDb().db.sql<{ key: string }[]>`SELECT key FROM wake_index WHERE organization_id = ${org.organizationId}`;
    assert.equal(wakes.length, 3, 'what the replay queued waits in the wake index');

    const again = await replay(org, id, since);
    assert.deepEqual(again.body.data, { requeued: 0, enqueued: 0, possiblyMore: false });
  });

  it('reaches back 90 days: since as a date, as a date-time with offset; older is 422 replay_window_exceeded', async () => {
    const org = await createTestOrg();
    const id = await endpoint(org, ['invoice.issued']);
    const e89 = await insertEvent(org, 'invoice.issued', 89 * DAY);
    await insertEvent(org, 'invoice.issued', 95 * DAY);
    await clearOutbox(org);
    const date = new Date(Date.now() - 90 * DAY + DAY / 2).toISOString().slice(0, 10);
    const byDate = await replay(org, id, date);
    assert.equal(byDate.status, 200, JSON.stringify(byDate.body));
    assert.deepEqual(byDate.body.data, { requeued: 0, enqueued: 1, possiblyMore: false });
    assert.deepEqual((await deliveries(id)).map((d) => d.event_id), [e89]);

    const offset = new Date(Date.now() - 10 * DAY).toISOString().replace('Z', '+00:00');
    assert.equal((await replay(org, id, offset)).status, 200);
    const tooOld = await replay(org, id, new Date(Date.now() - 92 * DAY).toISOString());
    assert.equal(tooOld.status, 422);
    assert.equal(tooOld.body.error.code, 'replay_window_exceeded');
    assert.equal(tooOld.body.error.details[0].path, '/since');
    for (const since of [undefined, '', 'yesterday', '2026-02-30', '2026-01-01T10:00:00', 12]) {
      const res = await call(t.app, 'POST', `/v1/webhook-endpoints/${id}/replay`, { key: org.apiKey, body: since === undefined ? {} : { since } });
      assert.equal(res.status, 400, String(since));
      assert.equal(res.body.error.code, 'validation_failed');
    }
  });

  it('queues for an inactive endpoint too; the deliveries wait until it is active again @cluster', async () => {
    const org = await createTestOrg();
    const id = await endpoint(org, ['invoice.issued']);
    await call(t.app, 'PATCH', `/v1/webhook-endpoints/${id}`, { key: org.apiKey, body: { active: false } });
    const e = await insertEvent(org, 'invoice.issued', 1000);
    await clearOutbox(org);
    const res = await replay(org, id, new Date(Date.now() - DAY).toISOString());
    assert.deepEqual(res.body.data, { requeued: 0, enqueued: 1, possiblyMore: false });
    assert.deepEqual(await deliveries(id), [{ event_id: e, status: 'queued', round: 1, attempts: 0 }]);
  });

  it('stops at 10,000 per call with possiblyMore, and the next call continues where it stopped', async function () {
    this.timeout(60_000);
    const org = await createTestOrg();
    const id = await endpoint(org, ['invoice.issued']);
    const { sql } = testDb().db;
    const base = Date.now() - DAY;
    // 10,002 events: two are given-up deliveries, the rest were never queued.
    await sql`
      INSERT INTO events (id, organization_id, type, entity_family, entity_id, sekvensnummer, occurred_at, data)
      SELECT (lpad(to_hex(${base}::bigint + g), 12, '0') || '7000800000000000' || lpad(to_hex(g), 4, '0'))::uuid,
             ${org.organizationId}, 'invoice.issued', 'invoice', gen_random_uuid(), 1,
             to_timestamp((${base}::bigint + g) / 1000.0), '{}'::jsonb
      FROM generate_series(1, 10002) AS g`;
    const firstTwo = await sql<{ id: string }[]>`SELECT id FROM events WHERE organization_id = ${org.organizationId} ORDER BY id LIMIT 2`;
    for (const e of firstTwo) await setDelivery(id, org, e.id, 'given-up', 8);
    await clearOutbox(org);
    const since = new Date(base - 1000).toISOString();
    const first = await replay(org, id, since);
    assert.deepEqual(first.body.data, { requeued: 2, enqueued: 9998, possiblyMore: true });
    const second = await replay(org, id, since);
    assert.deepEqual(second.body.data, { requeued: 0, enqueued: 2, possiblyMore: false });
    const [n] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = ${id} AND status = 'queued'`;
    assert.equal(n!.n, 10002);
  });
});
