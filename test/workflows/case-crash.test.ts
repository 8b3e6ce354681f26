import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WORK } from '../../contracts/workflows.ts';
import { freePort } from '../../deploy/local/ports.ts';
import { createRestateWakeups } from '../../services/clock/wakeups.ts';
import { addDays } from '../../services/shared/clock.ts';
import { createEngineClient } from '../../services/shared/engine-client.ts';
import { sign } from '../../services/webhooks/signing.ts';
import { call, createTestOrg, startTestApp, TEST_MASTER_KEY, testDb, type TestApp, type TestOrg } from '../helpers/context.ts';
import { startTestRestate, type TestRestate } from '../helpers/restate.ts';
import { startWorkerProcess, within } from '../helpers/worker-process.ts';

/**
 * A collection case's hand-over survives a killed workflows process (docs/collections.md, "The hand-over": the
 * handOverId is stable per case, so a repeat is the same hand-over; OVERDRAGET is recorded once).
 *
 * The workflows endpoint runs in a child process (fixtures/case-worker.ts) with the real activities and the HTTP
 * collection partner adapter, posting to a partner on loopback run here. The partner keeps every POST it receives
 * (it does not deduplicate, so a hand-over sent twice shows twice) and, like a partner honouring Idempotency-Key,
 * answers a repeated key with the reference it gave the first time. The child stops at one point of the hand-over
 * and is killed there with SIGKILL; a fresh child on the same endpoint address takes over, and Restate retries the
 * invocation from its journal.
 */

interface ReceivedHandOver {
  webhookId: string;
  idempotencyKey: string;
  handOverId: string;
  caseId: string;
  handedOverOn: string;
  body: string;
  signatureValid: boolean;
}

interface Partner {
  url: string;
  secret: string;
  posts: ReceivedHandOver[];
  close(): Promise<void>;
}

/** A collection partner on loopback: verifies the Standard Webhooks signature and keeps each POST. */
async function startPartner(): Promise<Partner> {
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const posts: ReceivedHandOver[] = [];
  const references = new Map<string, string>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const doc = JSON.parse(body) as { handOverId: string; case: { id: string }; handedOverOn: string };
      const webhookId = String(req.headers['webhook-id']);
      const idempotencyKey = String(req.headers['idempotency-key']);
      const signatureValid = req.headers['webhook-signature'] === sign(secret, webhookId, Number(req.headers['webhook-timestamp']), body);
      posts.push({ webhookId, idempotencyKey, handOverId: doc.handOverId, caseId: doc.case.id, handedOverOn: doc.handedOverOn, body, signatureValid });
      if (!references.has(idempotencyKey)) references.set(idempotencyKey, `INK-${references.size + 1}`);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ reference: references.get(idempotencyKey) }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/overdragelser`,
    secret,
    posts,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

type Fault = 'handed' | 'recorded';

interface Worker {
  stopped: Promise<{ point: string; caseId: string }>;
  kill(): Promise<void>;
}

describe('a collection case hand-over survives a killed workflows process', function () {
  this.timeout(90_000);
  let restate: TestRestate;
  let partner: Partner;
  let t: TestApp;
  const workers = new Set<ChildProcess>();

  before(async () => {
    // A shard's scheduler hands on every due row of its shard, whichever organisation's: rows that earlier test files
    // left due (sandbox clocks far ahead, and no engine running then) would otherwise be the first work this file's
    // faulty worker meets. The faults are about this file's invoices, so its engine starts with an empty index.
    await testDb().db.sql`DELETE FROM wake_index`;
    restate = await startTestRestate({ RESTATE_DEFAULT_RETRY_POLICY__MAX_ATTEMPTS: '200', RESTATE_DEFAULT_RETRY_POLICY__MAX_INTERVAL: '250ms' });
    partner = await startPartner();
    t = await startTestApp({ wakeups: createRestateWakeups(restate.ingressUrl), engine: createEngineClient(restate.ingressUrl, testDb().db) });
  });
  after(async () => {
    for (const child of workers) child.kill('SIGKILL');
    await t?.close();
    await partner?.close();
    await restate?.stop();
  });

  async function startWorker(port: number, fault?: Fault): Promise<Worker> {
    const w = await startWorkerProcess(
      'test/workflows/fixtures/case-worker.ts',
      [process.env.TEST_DATABASE_URL!, TEST_MASTER_KEY.toString('hex'), restate.adminUrl, partner.url, partner.secret, String(port)],
      { CASE_FAULT: fault ?? '', RESTATE_IDENTITY_KEYS: restate.identityKeys.join(',') },
      workers,
    );
    const stopped = w.stopped.then((s) => ({ point: s.point, caseId: s.id }));
    stopped.catch(() => {});
    return { ...w, stopped };
  }

  const caseRow = async (caseId: string) => {
    const [row] = await testDb().db.sql<{ state: string; handed_over_at: Date | null }[]>`
      SELECT state, handed_over_at FROM collection_cases WHERE id = ${caseId}`;
    return row!;
  };
  const caseEvents = async (org: TestOrg, caseId: string) =>
    (
      await testDb().db.sql<{ type: string; sekvensnummer: number }[]>`
        SELECT type, sekvensnummer FROM events WHERE organization_id = ${org.organizationId} AND entity_id = ${caseId} ORDER BY sekvensnummer`
    ).map((e) => `${e.sekvensnummer} ${e.type}`);

  /** Polls until `done` holds, or fails saying what it waited for. */
  async function until(what: string, done: () => Promise<boolean>, ms = 30_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!(await done())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Nothing due for the case in the wake index and no invocation of its Case object still open. */
  async function settled(org: TestOrg, caseId: string): Promise<void> {
    const key = WORK.collectionCase(org.organizationId, caseId).key;
    await until('the case to settle', async () => {
      const [wake] = await testDb().db.sql`SELECT 1 FROM wake_index WHERE service = 'Case' AND key = ${key}`;
      const open = await restate.query(
        `SELECT id FROM sys_invocation WHERE target_service_name = 'Case' AND target_service_key = '${key}' AND status <> 'completed'`,
      );
      return wake === undefined && open.length === 0;
    });
    // A late duplicate would arrive now, if at all.
    await new Promise((r) => setTimeout(r, 500));
  }

  /**
   * A case from POST /v1/cases: its own påkrav goes out at once (PAAKRAV_SENDT, dated today) by the faulty worker;
   * then the clock moves to the hand-over day (påkrav + 11), where the worker stops at `fault` and is killed; a fresh
   * worker finishes. Returns what was left at the kill and what the partner received.
   */
  async function killAndRestart(fault: Fault) {
    const port = await freePort();
    const faulty = await startWorker(port, fault);
    const org = await createTestOrg({ name: 'Inkasso Crash ApS' });
    const today = (await call(t.app, 'GET', '/v1/test-clock', { key: org.apiKey })).body.data.today as string;
    const body = {
      externalReference: `crash-${fault}-${process.pid}`,
      fordringer: [{ hovedstolOere: 250_000, forfaldsdato: addDays(today, -20), beskrivelse: 'Faktura 17' }],
      skyldnere: [{ skyldnerType: 'person', navn: 'Jens Skyldner', email: 'jens@skyldner.dk', cpr: '0101801234' }],
    };
    const created = await call(t.app, 'POST', '/v1/cases', { key: org.apiKey, body });
    assert.equal(created.status, 201, created.raw);
    const caseId = created.body.data.id as string;
    await until('the påkrav', async () => (await caseRow(caseId)).state === 'PAAKRAV_SENDT');
    assert.equal(partner.posts.filter((p) => p.caseId === caseId).length, 0);

    const advanced = await call(t.app, 'POST', '/v1/test-clock/advance', { key: org.apiKey, body: { days: 11 } });
    assert.equal(advanced.status, 200, advanced.raw);
    const stopped = await within(`the worker to stop at ${fault}`, faulty.stopped, 30_000);
    assert.deepEqual(stopped, { point: fault, caseId });
    await faulty.kill();

    const left = { state: (await caseRow(caseId)).state, posts: partner.posts.filter((p) => p.caseId === caseId).length, events: await caseEvents(org, caseId) };

    const fresh = await startWorker(port);
    try {
      await settled(org, caseId);
      const posts = partner.posts.filter((p) => p.caseId === caseId);
      const view = (await call(t.app, 'GET', `/v1/cases/${caseId}`, { key: org.apiKey })).body.data as { state: string; eventVersion: number };
      return {
        org,
        caseId,
        handOverOn: addDays(today, 11),
        left,
        posts,
        view,
        row: await caseRow(caseId),
        events: await caseEvents(org, caseId),
      };
    } finally {
      await fresh.kill();
    }
  }

  type Outcome = Awaited<ReturnType<typeof killAndRestart>>;

  /** One hand-over to the partner, however many POSTs carried it; the case OVERDRAGET once, with one sag.overdraget. */
  function assertOneHandOver(r: Outcome): void {
    const handOverId = `${r.org.organizationId}:${r.caseId}`;
    assert.deepEqual([...new Set(r.posts.map((p) => p.handOverId))], [handOverId], 'one distinct handOverId');
    for (const p of r.posts) {
      assert.equal(p.idempotencyKey, handOverId);
      assert.equal(p.webhookId, handOverId);
      assert.equal(p.handedOverOn, r.handOverOn);
      assert.ok(p.signatureValid, 'signed with the partner secret');
    }
    // A repeat is the same document, byte for byte.
    assert.equal(new Set(r.posts.map((p) => p.body)).size, 1);
    assert.equal(r.view.state, 'OVERDRAGET');
    assert.equal(r.view.eventVersion, 5);
    assert.ok(r.row.handed_over_at);
    assert.deepEqual(r.events, ['1 sag.oprettet', '2 sag.paakrav_sendt', '3 sag.status_aendret', '4 sag.overdraget', '5 sag.status_aendret']);
  }

  it('killed after the partner accepted the hand-over, before OVERDRAGET is recorded: the same hand-over again, recorded once', async () => {
    const r = await killAndRestart('handed');
    assert.deepEqual(r.left, { state: 'PAAKRAV_SENDT', posts: 1, events: ['1 sag.oprettet', '2 sag.paakrav_sendt', '3 sag.status_aendret'] });
    assertOneHandOver(r);
    // At-least-once delivery: the step ran again and posted the same hand-over under the same Idempotency-Key.
    assert.equal(r.posts.length, 2);
  });

  it('killed after OVERDRAGET committed, before its step was journaled: not handed over again, recorded once', async () => {
    const r = await killAndRestart('recorded');
    assert.equal(r.left.state, 'OVERDRAGET');
    assert.equal(r.left.posts, 1);
    assertOneHandOver(r);
    assert.equal(r.posts.length, 1);
  });
});
