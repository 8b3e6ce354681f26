import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { freePort } from '../../deploy/local/ports.ts';
import { listenForEarlierWakes } from '../../services/clock/wakeups.ts';
import { recordEvent, type EventRecord } from '../../services/events/record-event.ts';
import { startEventRelay, type EventForwarder, type RunningRelay } from '../../services/events/event-relay.ts';
import { uuidv7 } from '../../services/shared/ids.ts';
import { createActivities, registerDeployment, startWorkflowsEndpoint, type WorkflowsEndpoint } from '../../workflows/main.ts';
import { testActivityResources } from '../helpers/activities.ts';
import { createTestOrg, testDb } from '../helpers/context.ts';
import { startTestRestate, type TestRestate } from '../helpers/restate.ts';

/**
 * The relay's retry after a failed hand-off is wake-index work (services/events/event-relay.ts): the failure lists
 * the organisation's EventOutbox row a few seconds on, the shard's scheduler sends it when it comes due, and its step
 * drains the outbox through the relay. Real restate-server, the schedulers' listener, a forwarder that refuses once.
 */
describe('event relay: a failed hand-off is retried through the wake index', function () {
  this.timeout(60_000);
  let restate: TestRestate;
  let endpoint: WorkflowsEndpoint;
  let relay: RunningRelay | undefined;
  let unlisten: () => Promise<void>;
  const forwarded: string[] = [];
  let refuse = 1;
  const forwarder: EventForwarder = {
    async forward({ eventId }) {
      if (refuse > 0) {
        refuse--;
        throw new Error('engine unreachable');
      }
      forwarded.push(eventId);
    },
  };

  before(async () => {
    restate = await startTestRestate();
    const { db } = testDb();
    endpoint = await startWorkflowsEndpoint({
      activities: createActivities(
        db,
        { idempotencyRetentionDays: 30, mailFromAddress: 'no-reply@faktura.invalid', publicApiUrl: undefined },
        { ...testActivityResources(), drainEventOutbox: () => relay?.drain() ?? Promise.resolve() },
      ),
      host: '127.0.0.1',
      port: await freePort(),
      identityKeys: restate.identityKeys,
      logStream: new Writable({ write: (_c, _e, cb) => cb() }),
    });
    await registerDeployment(restate.adminUrl, endpoint.url);
    unlisten = await listenForEarlierWakes(db, restate.ingressUrl, () => {});
    relay = await startEventRelay(db, forwarder);
  });
  after(async () => {
    await relay?.close();
    await unlisten?.();
    await endpoint?.close();
    await restate?.stop();
  });

  it('lists the organisation’s outbox drain a few seconds on, and the scheduler hands the event on then', async () => {
    const org = await createTestOrg();
    const { db } = testDb();
    // An endpoint that wants the event, so that the event gets an outbox row.
    await db.sql`
      INSERT INTO webhook_endpoints (id, organization_id, url, event_types, secret_enc, active)
      VALUES (${uuidv7()}, ${org.organizationId}, 'https://example.invalid/hook', ${['invoice.sent']}, ${Buffer.from('x')}, true)`;
    const entityId = uuidv7();
    const { id } = await db.tx((tx) =>
      recordEvent(tx, { organizationId: org.organizationId, type: 'invoice.sent', entityId, data: { invoiceId: entityId, externalReference: null } } as EventRecord),
    );
    const listed = async () =>
      (await db.sql<{ due_at: Date }[]>`SELECT due_at FROM wake_index WHERE service = 'EventOutbox' AND key = ${org.organizationId}`)[0];
    let row: { due_at: Date } | undefined;
    for (let i = 0; i < 50 && !row; i++) {
      row = await listed();
      if (!row) await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(row, 'the failed hand-off listed the retry');
    assert.ok(row.due_at.getTime() > Date.now(), 'a few seconds on');
    assert.equal(forwarded.length, 0, 'not handed on yet');
    for (let i = 0; i < 150 && !forwarded.includes(id); i++) await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(forwarded, [id]);
    assert.equal(await listed(), undefined, 'the retry row is cleared');
    const outboxRows = async () => (await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM event_outbox WHERE event_id = ${id}`)[0]!.n;
    for (let i = 0; i < 50 && (await outboxRows()) > 0; i++) await new Promise((r) => setTimeout(r, 100));
    assert.equal(await outboxRows(), 0, 'the row handed on is deleted');
  });
});
