import assert from 'node:assert/strict';
import * as http2 from 'node:http2';
import { addDays, copenhagenToday } from '../../services/shared/clock.ts';
import { LAW } from '../../services/law/danish-law.ts';
import { WORKFLOW_SERVICES } from '../../contracts/workflows.ts';
import { RETENTION_DAYS } from '../../workflows/shared/durable.ts';
import { call } from '../helpers/context.ts';
import { reminderSettingsBody } from '../helpers/reminders.ts';
import { startScenario, type Scenario } from '../helpers/scenario.ts';

/**
 * The durable engine as an operator meets it, on the whole stack with a real restate-server
 * (docs/operator-guide.md): the endpoint serves only requests restate-server signed, a Dunning step's journaled
 * result names the rule behind it and stays readable after the invocation completed, and every service reports the
 * 35-day retention of its options while the server's default is left at Restate's 1 day.
 */
describe('the engine as operators meet it', function () {
  this.timeout(120_000);
  let s: Scenario;
  let endpointUrl: string;

  before(async () => {
    // Restate's own default (1 day) on the server: what the services report can only come from their options.
    s = await startScenario({ orgName: 'Journal ApS', restateEnv: { RESTATE_DEFAULT_JOURNAL_RETENTION: '1d', RESTATE_DEFAULT_IDEMPOTENCY_RETENTION: '1d' } });
    const deployments = (await (await fetch(`${s.restate.adminUrl}/deployments`)).json()) as { deployments: { uri: string }[] };
    assert.equal(deployments.deployments.length, 1);
    endpointUrl = deployments.deployments[0]!.uri;
  });
  after(async () => {
    await s?.close();
  });

  /** One HTTP/2 request straight to the workflows endpoint, as anyone reaching its port could send it. */
  const h2 = (path: string, method: string, headers: Record<string, string> = {}): Promise<number> =>
    new Promise((resolve, reject) => {
      const session = http2.connect(endpointUrl);
      session.on('error', reject);
      const req = session.request({ ':method': method, ':path': path, ...headers });
      req.on('response', (h) => {
        resolve(Number(h[':status']));
        req.close();
        session.close();
      });
      req.on('error', reject);
      req.end();
    });

  it('refuses requests restate-server did not sign: discovery and an invocation answer 401', async () => {
    assert.equal(await h2('/discover', 'GET', { accept: 'application/vnd.restate.endpointmanifest.v3+json' }), 401);
    assert.equal(await h2(`/invoke/${WORKFLOW_SERVICES.Dunning}/wake`, 'POST', { 'content-type': 'application/vnd.restate.invocation.v5' }), 401);
    // A forged signature is no better than none.
    assert.equal(await h2('/discover', 'GET', { 'x-restate-signature-scheme': 'v1', 'x-restate-jwt-v1': 'eyJhbGciOiJFZERTQSJ9.e30.AAAA' }), 401);
    // Health stays open (load balancers' checks carry no signature).
    assert.equal(await h2('/health', 'GET'), 200);
  });

  it('journals the rule behind each Dunning step, readable in sys_journal after the invocation completed', async () => {
    const res = await call(s.api.app, 'PUT', '/v1/reminder-settings', { key: s.org.apiKey, body: reminderSettingsBody({}) });
    assert.equal(res.status, 200, res.raw);
    const inv = await s.issue({ paymentTermsDays: 14 });
    // Reminder 1 on due + 7, reminder 2 ten days after it (due + 17, not the cadence's due + 14).
    await s.advance(14 + 17);
    const key = `${s.org.organizationId}:${inv.id}`;
    // The last invocation may still be releasing its claim when the advance has settled: wait for it to complete.
    const query = () =>
      s.restate.query<{ id: string; status: string; journal_retention: string; completion_retention: string }>(
        `SELECT id, status, journal_retention, completion_retention FROM sys_invocation
         WHERE target_service_name = 'Dunning' AND target_service_key = '${key}' ORDER BY created_at`,
      );
    let invocations = await query();
    for (const until = Date.now() + 15_000; invocations.some((i) => i.status !== 'completed') && Date.now() < until; ) {
      await new Promise((r) => setTimeout(r, 100));
      invocations = await query();
    }
    assert.ok(invocations.length > 0, 'the invoice has Dunning invocations');
    // Completed, and kept (journal and all) for the services' 35 days, not the server's 1-day default.
    const days35 = `PT${RETENTION_DAYS * 24 * 3600}S`;
    assert.deepEqual(
      invocations.map((i) => [i.status, i.journal_retention, i.completion_retention]),
      invocations.map(() => ['completed', days35, days35]),
    );
    const ids = invocations.map((i) => `'${i.id}'`).join(', ');
    const entries = await s.restate.query<{ id: string; index: number; entry_type: string; name: string | null; entry_json: string | null }>(
      `SELECT id, index, entry_type, name, entry_json FROM sys_journal WHERE id IN (${ids}) ORDER BY id, index`,
    );
    // Each ctx.run is a Run command with the step's name, its value the Run notification of the same completion id.
    const results = runResults(entries).filter((r) => r.name.startsWith('take-step-')).map((r) => r.value as DunningStepResult);
    const rules = results.filter((r) => r.kind === 'deliver' && r.taken !== undefined).map((r) => [r.taken!.reminderNumber, r.taken!.feeOere, r.rule]);
    assert.deepEqual(rules, [
      [1, 10_000, { date: 'plan-days-after-due', fee: 'renteloven-9b-100-kr', text: `The plan: the step's day is the due date + its daysAfterDue (the reminder settings, or the reminder flow the invoice is pinned to). ${LAW.feeCap.text}` }],
      [2, 10_000, { date: 'renteloven-9b-10-days', fee: 'renteloven-9b-100-kr', text: `${LAW.feeInterval.text} ${LAW.feeCap.text}` }],
    ]);
    const history = await call(s.api.app, 'GET', `/v1/invoices/${inv.id}/reminders`, { key: s.org.apiKey });
    assert.deepEqual(
      (history.body.data as { sentAt: string }[]).map((h) => copenhagenToday(new Date(h.sentAt))),
      [addDays(inv.dueDate, 7), addDays(inv.dueDate, 17)],
    );
  });

  it('every durable service keeps its journals and idempotency keys 35 days, whatever the server default', async () => {
    const expected = `${RETENTION_DAYS}d`;
    for (const name of Object.values(WORKFLOW_SERVICES)) {
      const res = await fetch(`${s.restate.adminUrl}/services/${name}`);
      assert.equal(res.status, 200, name);
      const service = (await res.json()) as { journal_retention?: string; idempotency_retention?: string };
      assert.deepEqual([name, service.journal_retention, service.idempotency_retention], [name, expected, expected]);
    }
  });
});

interface DunningStepResult {
  kind: string;
  taken?: { reminderNumber: number | null; feeOere: number };
  rule?: { date: string; fee: string | null; text: string };
}

/**
 * The journaled value of every ctx.run, by its name: a `Command: Run` entry names the step and its completion id, and
 * the `Notification: Run` entry with that id holds the value, the JSON the SDK wrote, as a list of bytes.
 */
function runResults(entries: { id: string; entry_json: string | null }[]): { id: string; name: string; value: unknown }[] {
  const names = new Map<string, string>();
  const out: { id: string; name: string; value: unknown }[] = [];
  for (const e of entries) {
    if (e.entry_json === null) continue;
    const j = JSON.parse(e.entry_json) as {
      Command?: { Run?: { completion_id: number; name: string } };
      Notification?: { Completion?: { Run?: { completion_id: number; result: { Success?: number[] } } } };
    };
    const command = j.Command?.Run;
    if (command) names.set(`${e.id}/${command.completion_id}`, command.name);
    const done = j.Notification?.Completion?.Run;
    if (done?.result.Success) {
      out.push({ id: e.id, name: names.get(`${e.id}/${done.completion_id}`) ?? '', value: JSON.parse(Buffer.from(done.result.Success).toString('utf8')) });
    }
  }
  return out;
}
