import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { randomUUID } from 'node:crypto';
import { freePort } from '../../deploy/local/ports.ts';
import { restateOpenInvocations } from '../../services/clock/engine-invocations.ts';
import { claimWake, releaseClaimsWithoutInvocation } from '../../services/clock/wake-index.ts';
import { createActivities, registerDeployment, startWorkflowsEndpoint, type WorkflowsEndpoint } from '../../workflows/main.ts';
import { testActivityResources } from '../helpers/activities.ts';
import { createTestOrg, testDb, type TestOrg } from '../helpers/context.ts';
import { startTestRestate, type TestRestate } from '../helpers/restate.ts';

/**
 * The backstop's check of old claims against the engine (services/clock/engine-invocations.ts): a claim whose
 * invocation the engine no longer has is released, so its row is handed on again; a claim whose invocation is still
 * there (here: scheduled for later) is left alone. Real restate-server, its own introspection query.
 */
describe('wake index: claims whose invocation is gone are released by the backstop', function () {
  this.timeout(60_000);
  let restate: TestRestate;
  let endpoint: WorkflowsEndpoint;
  let org: TestOrg;

  before(async () => {
    restate = await startTestRestate();
    endpoint = await startWorkflowsEndpoint({
      activities: createActivities(testDb().db, { idempotencyRetentionDays: 30, mailFromAddress: 'no-reply@faktura.invalid', publicApiUrl: undefined }, testActivityResources()),
      host: '127.0.0.1',
      port: await freePort(),
      identityKeys: restate.identityKeys,
      logStream: new Writable({ write: (_c, _e, cb) => cb() }),
    });
    await registerDeployment(restate.adminUrl, endpoint.url);
    org = await createTestOrg();
  });
  after(async () => {
    await endpoint?.close();
    await restate?.stop();
  });

  const claimedRow = async (key: string) => {
    await testDb().db.sql`SELECT wake_schedule('WebhookDelivery', 'wake', ${key}, ${org.organizationId}::uuid, now() - interval '1 second')`;
    const claim = await claimWake(testDb().db.sql, { service: 'WebhookDelivery', key });
    assert.ok(claim);
    return claim;
  };
  const isClaimed = async (key: string) =>
    (await testDb().db.sql<{ claimed: boolean }[]>`SELECT claimed_at IS NOT NULL AS claimed FROM wake_index WHERE service = 'WebhookDelivery' AND key = ${key}`)[0]!.claimed;

  it('releases a claim with no invocation behind it, and keeps one whose invocation the engine still holds', async () => {
    const lost = randomUUID();
    const held = randomUUID();
    await claimedRow(lost);
    await claimedRow(held);
    // The held row's invocation: a call the engine keeps scheduled for a minute.
    const res = await fetch(`${restate.ingressUrl}/WebhookDelivery/${held}/wake/send?delay=60s`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: 999 }),
    });
    assert.equal(res.status, 202, await res.text());
    const open = restateOpenInvocations(restate.adminUrl);
    assert.deepEqual([...(await open([{ service: 'WebhookDelivery', key: lost }, { service: 'WebhookDelivery', key: held }]))], [`WebhookDelivery/${held}`]);
    // Claims younger than the grace are not looked at.
    assert.equal(await releaseClaimsWithoutInvocation(testDb().db, open, 60_000), 0);
    assert.equal(await releaseClaimsWithoutInvocation(testDb().db, open, 0), 1);
    assert.equal(await isClaimed(lost), false);
    assert.equal(await isClaimed(held), true);
  });

  it('refuses to put anything but a target name and key into the engine query', async () => {
    await assert.rejects(restateOpenInvocations(restate.adminUrl)([{ service: 'WebhookDelivery', key: "x' OR '1'='1" }]), /not a wake-index target/);
  });
});
