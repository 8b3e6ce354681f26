/**
 * `npm run drill`: the fault drill (docs/operations.md, "Fault drill").
 *
 * Starts the stack on a fresh DATA_DIR, drives the mixed load of load.ts for DRILL_SECONDS (default 60), and during
 * it SIGKILLs one Restate node (which stays down), one workflows process and one API process (both started again at
 * once, as a supervisor would). Then it lets the durable work settle, reads what PostgreSQL and the receivers hold,
 * prints one row per check and exits 0 only when every check holds.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSql, type Sql } from '../../services/shared/db.ts';
import { startSmtpSink } from '../helpers/smtp-sink.ts';
import { Receiver } from '../helpers/webhooks.ts';
import { seconds, type Kill } from './checks.ts';
import { newRetryCounts } from './client.ts';
import { committedEvents, readFacts, webhookDeliveries } from './facts.ts';
import { startLoad } from './load.ts';
import { setUpOrganisations, type DrillOrg } from './organisations.ts';
import { drillVerdicts, formatVerdicts } from './report.ts';
import { startDrillStack, type DrillStack } from './stack.ts';

/** The targets (docs/operations.md, "Fault drill"). */
const SILENCE_LIMIT_MS = 10_000;
const PROGRESS_LIMIT_MS = 30_000;
/**
 * How long the durable work may take to settle after the load stops before the checks read what there is. The load
 * makes more PDFs than two workflows processes with one Chromium page each render in its time (a 60 s drill leaves
 * about a minute of them); what is not done by then counts as left behind.
 */
const SETTLE_LIMIT_MS = 180_000;
/**
 * The clock covers about this much business time over the run, whatever its length: enough for the invoices of the
 * first part of the run to go through the payment reminder, three reminders and the hand-over (due + 14 + 21 + 11).
 */
const BUSINESS_DAYS = 60;

const out = (line: string) => void process.stdout.write(`${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function drillSeconds(): number {
  const raw = process.env.DRILL_SECONDS ?? '60';
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 10) throw new Error(`DRILL_SECONDS must be a whole number of at least 10, not "${raw}"`);
  return n;
}

/** Waits until nothing of the drill's organisations is due, queued or undelivered; false when the limit passed. */
async function settle(sql: Sql, orgs: DrillOrg[], webhooks: Receiver): Promise<{ settled: boolean; ms: number; waiting: string }> {
  const started = Date.now();
  const ids = orgs.map((o) => o.organizationId);
  let waiting = '';
  while (Date.now() - started < SETTLE_LIMIT_MS) {
    const [w] = await sql<{ due: number; outbox: number; sends: number; reminders: number; issuing: number }[]>`
      SELECT (SELECT count(*) FROM wake_index WHERE organization_id IN ${sql(ids)} AND parked_at IS NULL
                AND due_at <= business_now(organization_id))::int AS due,
             (SELECT count(*) FROM event_outbox WHERE organization_id IN ${sql(ids)})::int AS outbox,
             (SELECT count(*) FROM invoice_sends WHERE organization_id IN ${sql(ids)} AND status = 'queued')::int AS sends,
             (SELECT count(*) FROM reminders WHERE organization_id IN ${sql(ids)} AND delivery = 'pending')::int AS reminders,
             (SELECT count(*) FROM invoices WHERE organization_id IN ${sql(ids)} AND status = 'issuing')::int AS issuing`;
    const delivered = new Set(webhookDeliveries(webhooks.received).map((d) => d.eventId));
    const undelivered = (await committedEvents(sql, orgs)).filter((e) => !delivered.has(e.id)).length;
    waiting = `${w!.due} due, ${w!.outbox} in the outbox, ${undelivered} undelivered events, ${w!.sends} queued mails, ${w!.reminders} pending reminders, ${w!.issuing} issues`;
    if (w!.due + w!.outbox + w!.sends + w!.reminders + w!.issuing + undelivered === 0) return { settled: true, ms: Date.now() - started, waiting: '' };
    await sleep(250);
  }
  return { settled: false, ms: Date.now() - started, waiting };
}

async function main(): Promise<number> {
  const durationS = drillSeconds();
  const dataDir = mkdtempSync(join(tmpdir(), 'faktura-drill-'));
  out(`Fault drill: ${durationS} s of load on a fresh stack in ${dataDir}`);

  const webhooks = await new Receiver().start();
  const partner = await new Receiver().start();
  const smtp = await startSmtpSink();
  let stack: DrillStack | undefined;
  let sql: Sql | undefined;
  let keepData = true;
  try {
    const startedAt = Date.now();
    stack = await startDrillStack(
      dataDir,
      {
        SMTP_URL: smtp.url,
        WEBHOOK_ALLOW_LOOPBACK: 'true',
        COLLECTION_PARTNER_URL: partner.url,
        COLLECTION_PARTNER_SECRET: `whsec_${randomBytes(32).toString('base64')}`,
      },
      // Only the drill's own kills are expected; anything else dying is worth a line of its own.
      (name, how) => out(`  ! ${name} exited by itself (${how})`),
    );
    const s = stack;
    out(`  start:cluster up in ${seconds(Date.now() - startedAt)}: ${[...s.restateNodes, ...s.apis, ...s.workflows].join(', ')}; API ${s.apiUrl}`);
    const retries = newRetryCounts();
    const { shop, calendar } = await setUpOrganisations(s, webhooks.url, retries);

    const load = startLoad({ shop, calendar }, { daysPerAdvance: Math.max(1, Math.round(BUSINESS_DAYS / durationS)) });
    const kills: (Kill & { durable: boolean })[] = [];
    const resends: Promise<void>[] = [];
    const restarts: Promise<void>[] = [];
    const at = (fraction: number) => sleep(Math.max(0, load.record.from + fraction * durationS * 1000 - Date.now()));
    const say = (what: string) => out(`  +${seconds(Date.now() - load.record.from)}  ${what}`);
    const kill = async (what: string, name: string | undefined, o: { restart: boolean; durable: boolean; beforeKill?: () => Promise<void> }) => {
      if (!name) return say(`no ${what} to kill in this stack`);
      await o.beforeKill?.();
      const killedAt = Date.now();
      await s.kill(name);
      kills.push({ what, at: killedAt, durable: o.durable });
      say(`SIGKILL ${name}${o.restart ? '' : ' (it stays down)'}`);
      if (!o.restart) return;
      // The load does not wait for the restart: the other replica is there for that.
      restarts.push(s.restart(name).then(() => say(`${name} is back, ${seconds(Date.now() - killedAt)} after its kill`)));
    };
    const api = s.apis[0];
    await Promise.all([
      at(0.25).then(async () => kill('Restate node', await s.busiestRestateNode(), { restart: false, durable: true })),
      at(0.45).then(() => kill('workflows process', s.workflows[0], { restart: true, durable: true })),
      at(0.65).then(() =>
        kill('API process', api, {
          restart: true,
          durable: false,
          // A payment in flight on the process that dies: its client sends it again once the connection breaks.
          beforeKill: async () => {
            const resend = await load.holdPayment(s.urlOf(api!));
            resends.push(resend());
          },
        }),
      ),
      sleep(durationS * 1000),
    ]);
    const record = await load.stop();
    say(`load stopped: ${record.invoices} invoices, ${record.payments} payments, ${record.advances} clock advances (${record.businessDays} business days)`);
    await Promise.all([...resends, ...restarts]);

    sql = createSql(s.databaseUrl, { max: 2 });
    const settled = await settle(sql, [shop, calendar], webhooks);
    out(settled.settled ? `  durable work settled ${seconds(settled.ms)} after the load` : `  durable work did not settle within ${seconds(settled.ms)}: ${settled.waiting}`);

    const facts = await readFacts(sql, { shop, calendar }, { webhooks: webhooks.received, handOvers: partner.received, mails: smtp.received });
    const verdicts = drillVerdicts(record, facts, kills.filter((k) => k.durable), { silenceMs: SILENCE_LIMIT_MS, progressMs: PROGRESS_LIMIT_MS });
    out('');
    out(formatVerdicts(verdicts));
    out('');
    out(
      `Retries: ${record.deliberateRepeats} payments sent twice on purpose, ${record.repeatsAfterNoAnswer} sent again after an attempt that got no answer; ` +
        `requests repeated after ${retries.connectionError} connection errors, ${retries.serverError} 5xx, ${retries.inProgress} 409 in progress, ${retries.rateLimited} 429.`,
    );
    const failed = verdicts.filter((v) => !v.ok);
    out(failed.length === 0 ? 'Fault drill passed: every check holds.' : `Fault drill FAILED: ${failed.length} of ${verdicts.length} checks do not hold (logs in ${dataDir}/logs).`);
    keepData = failed.length > 0;
    return failed.length === 0 ? 0 : 1;
  } finally {
    await sql?.end({ timeout: 5 });
    await stack?.stop();
    await webhooks.stop();
    await partner.stop();
    await smtp.close();
    // A failed drill keeps its DATA_DIR: the processes' logs say what happened.
    if (!keepData) rmSync(dataDir, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`error: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(2);
  },
);
