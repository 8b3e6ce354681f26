import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { addDays } from '../../services/shared/clock.ts';
import { call, testDb } from '../helpers/context.ts';
import { reminderSettingsBody } from '../helpers/reminders.ts';
import { startScenario, type Invoice, type Scenario } from '../helpers/scenario.ts';
import { runScript, type Run } from '../helpers/scripts.ts';
import { metricReaches, metricValue } from '../helpers/metrics.ts';

/**
 * Collection cases on a sandbox clock (docs/collections.md): an invoice is
 * reminded, collected, its påkrav taken over or sent, and the case handed to the local collection partner on the
 * påkrav date + 11 days; a payment closes it; the operator withdraws one. Real restate-server, PostgreSQL, Chromium
 * and an SMTP server on loopback; the partner writes one JSON file per hand-over into the scenario's directory.
 */
describe('scenario: collection cases', function () {
  this.timeout(240_000);
  let s: Scenario;

  before(async () => {
    s = await startScenario({ orgName: 'Inkasso Test ApS' });
  });
  after(async () => {
    await s?.close();
  });

  const PERSON = { type: 'person', name: 'Jens Skyldner', email: 'jens@skyldner.dk', address: { street: 'Skyldnervej 3', postalCode: '8000', city: 'Aarhus C' } };

  const settings = async (body: Record<string, unknown>) => {
    const res = await call(s.api.app, 'PUT', '/v1/reminder-settings', { key: s.org.apiKey, body: reminderSettingsBody(body) });
    assert.equal(res.status, 200, res.raw);
  };
  const collect = async (invoiceId: string) => {
    const res = await call(s.api.app, 'POST', `/v1/invoices/${invoiceId}/collect`, { key: s.org.apiKey });
    assert.equal(res.status, 201, res.raw);
    await s.settle();
    return res.body.data as { id: string; caseNumber: number };
  };
  const getCase = async (id: string) => {
    const res = await call(s.api.app, 'GET', `/v1/cases/${id}`, { key: s.org.apiKey });
    assert.equal(res.status, 200, res.raw);
    return res.body.data as { state: string; status: string; paakravFrist: string | null; eventVersion: number; fakturaId: string };
  };
  /** The case's events as the event API shows them: type and sekvensnummer, in order, with their data. */
  const caseEvents = async (caseId: string) => {
    const res = await call(s.api.app, 'GET', '/v1/events?limit=200', { key: s.org.apiKey });
    assert.equal(res.status, 200, res.raw);
    return (res.body.data as { type: string; sag?: { id: string; sekvensnummer: number }; data: Record<string, unknown> }[])
      .filter((e) => e.sag?.id === caseId)
      .sort((a, b) => a.sag!.sekvensnummer - b.sag!.sekvensnummer);
  };
  const handOvers = (): string[] => readdirSync(s.collectionsDir).filter((f) => f.endsWith('.json'));
  const handOverOf = (caseId: string): Record<string, unknown> | undefined => {
    for (const f of handOvers()) {
      const doc = JSON.parse(readFileSync(join(s.collectionsDir, f), 'utf8')) as { case: { id: string } };
      if (doc.case.id === caseId) return doc;
    }
    return undefined;
  };
  /** Advance the clock to `date` (forward only). */
  const advanceTo = async (date: string) => {
    const today = await s.today();
    const days = Math.round((Date.parse(`${date}T00:00:00Z`) - Date.parse(`${today}T00:00:00Z`)) / 86_400_000);
    assert.ok(days >= 1, `the clock is at ${today}, past ${date}`);
    await s.advance(days);
  };
  /** No personal data (the customer's name, e-mail, street) in a case's events or status. */
  const assertNoPersonalData = (value: unknown) => {
    const text = JSON.stringify(value);
    for (const pii of ['Jens', 'Skyldner', 'skyldner.dk', 'Skyldnervej', 'Aarhus']) assert.ok(!text.includes(pii), `${pii} in ${text}`);
  };
  const eventShape = (events: Awaited<ReturnType<typeof caseEvents>>) => events.map((e) => [e.sag!.sekvensnummer, e.type, e.data.state, e.data.status]);

  it('reminders, collect, the demand letter is the påkrav, hand-over on påkrav + 11 (not + 10), one JSON file', async () => {
    await settings({});
    const customerId = await s.customer(PERSON);
    const inv: Invoice = await s.issue({ customerId, paymentTermsDays: 14 });
    const due = inv.dueDate;
    const steps = () => Promise.all((['paakrav', 'hand_over'] as const).map((kind) => metricValue('faktura_case_steps_total', { kind })));
    const stepsBefore = await steps();
    await advanceTo(addDays(due, 28));
    const caseView = await collect(inv.id);
    // The demand letter went out on due + 27: that is the påkrav date.
    const paakravOn = addDays(due, 27);
    let c = await getCase(caseView.id);
    assert.deepEqual([c.state, c.status, c.paakravFrist, c.eventVersion, c.fakturaId], ['PAAKRAV_SENDT', 'afventer', addDays(paakravOn, 10), 3, inv.id]);
    assert.equal((await s.invoice(inv.id)).status, 'collections');
    // The deadline's last day: not yet.
    await advanceTo(addDays(paakravOn, 10));
    assert.equal((await getCase(caseView.id)).state, 'PAAKRAV_SENDT');
    assert.equal(handOverOf(caseView.id), undefined);
    await advanceTo(addDays(paakravOn, 11));
    c = await getCase(caseView.id);
    assert.deepEqual([c.state, c.status, c.eventVersion], ['OVERDRAGET', 'aktiv', 5]);
    const doc = handOverOf(caseView.id) as { handOverId: string; handedOverOn: string; paakrav: unknown } | undefined;
    assert.ok(doc, 'the hand-over file');
    assert.equal(handOvers().filter((f) => readFileSync(join(s.collectionsDir, f), 'utf8').includes(caseView.id)).length, 1);
    // Archived as a document before it was sent: the case names exactly the file's bytes in the document store.
    const [archived] = await testDb().db.sql<{ content_type: string; content: Buffer }[]>`
      SELECT d.content_type, d.content FROM collection_cases c JOIN documents d ON d.sha256 = c.hand_over_document_sha256
      WHERE c.id = ${caseView.id} AND d.organization_id = ${s.org.organizationId}`;
    // Sealed with the personal-data key: the CPR numbers it carries are not in the clear at rest.
    assert.equal(archived?.content_type, 'application/vnd.faktura.sealed-hand-over');
    assert.equal(archived.content.includes(Buffer.from('"cpr"')), false);
    assert.equal(testDb().keyring.decrypt(archived.content), readFileSync(join(s.collectionsDir, `${caseView.id}.json`), 'utf8'));
    assert.deepEqual([doc.handOverId, doc.handedOverOn, doc.paakrav], [`${s.org.organizationId}:${caseView.id}`, addDays(paakravOn, 11), { sentOn: paakravOn, deadline: addDays(paakravOn, 10) }]);
    const events = await caseEvents(caseView.id);
    assert.deepEqual(eventShape(events), [
      [1, 'sag.oprettet', 'OPRETTET', 'aktiv'],
      [2, 'sag.paakrav_sendt', 'PAAKRAV_SENDT', 'afventer'],
      [3, 'sag.status_aendret', 'PAAKRAV_SENDT', 'afventer'],
      [4, 'sag.overdraget', 'OVERDRAGET', 'aktiv'],
      [5, 'sag.status_aendret', 'OVERDRAGET', 'aktiv'],
    ]);
    assertNoPersonalData(events);
    assertNoPersonalData(c);
    // Nothing more is timed for the case; a later advance hands nothing over again.
    const [wake] = await testDb().db.sql`SELECT 1 FROM wake_index WHERE service = 'Case' AND key = ${`${s.org.organizationId}:${caseView.id}`}`;
    assert.equal(wake, undefined);
    await s.advance(3);
    assert.equal((await getCase(caseView.id)).eventVersion, 5);
    // The workflows' metrics count the påkrav (the demand letter's, recorded by the case) and the hand-over once each.
    await metricReaches('faktura_case_steps_total', { kind: 'hand_over' }, stepsBefore[1]! + 1);
    assert.deepEqual((await steps()).map((n, i) => n - stepsBefore[i]!), [1, 1]);
  });

  it('collect with maxReminders 0: the case sends its own påkrav (a mail) today, and is handed over on today + 11', async () => {
    await settings({ maxReminders: 0 });
    const customerId = await s.customer(PERSON);
    const inv = await s.issue({ customerId, paymentTermsDays: 14 });
    await advanceTo(addDays(inv.dueDate, 2));
    const mailsBefore = s.mails().length;
    const today = await s.today();
    const caseView = await collect(inv.id);
    const c = await getCase(caseView.id);
    assert.deepEqual([c.state, c.paakravFrist, c.eventVersion], ['PAAKRAV_SENDT', addDays(today, 10), 3]);
    const mails = s.mails().slice(mailsBefore);
    assert.equal(mails.length, 1, 'the påkrav mail');
    assert.ok(/^message-id:\s*<case-paakrav-[0-9a-f-]{36}@/im.test(mails[0]!) && mails[0]!.includes(`case-paakrav-${caseView.id}@`), 'the case\'s Message-ID');
    await advanceTo(addDays(today, 10));
    assert.equal((await getCase(caseView.id)).state, 'PAAKRAV_SENDT');
    await advanceTo(addDays(today, 11));
    assert.equal((await getCase(caseView.id)).state, 'OVERDRAGET');
    assert.ok(handOverOf(caseView.id));
  });

  it('a payment in PAAKRAV_SENDT: sag.betaling_modtaget per payment, the settling one closes the case, no hand-over', async () => {
    await settings({ maxReminders: 0 });
    const customerId = await s.customer(PERSON);
    const inv = await s.issue({ customerId, paymentTermsDays: 14 });
    await advanceTo(addDays(inv.dueDate, 1));
    const caseView = await collect(inv.id);
    assert.equal((await getCase(caseView.id)).state, 'PAAKRAV_SENDT');
    await s.pay(inv.id, 20_000);
    let c = await getCase(caseView.id);
    assert.deepEqual([c.state, c.eventVersion], ['PAAKRAV_SENDT', 4]);
    await s.pay(inv.id, inv.grossOere - 20_000);
    c = await getCase(caseView.id);
    assert.deepEqual([c.state, c.status, c.eventVersion], ['AFSLUTTET', 'lukket', 7]);
    assert.equal((await s.invoice(inv.id)).status, 'paid');
    const events = await caseEvents(caseView.id);
    assert.deepEqual(eventShape(events).slice(3), [
      [4, 'sag.betaling_modtaget', 'PAAKRAV_SENDT', 'afventer'],
      [5, 'sag.betaling_modtaget', 'PAAKRAV_SENDT', 'afventer'],
      [6, 'sag.afsluttet', 'AFSLUTTET', 'lukket'],
      [7, 'sag.status_aendret', 'AFSLUTTET', 'lukket'],
    ]);
    assert.deepEqual(events.filter((e) => e.type === 'sag.betaling_modtaget').map((e) => e.data.amountOere), [20_000, inv.grossOere - 20_000]);
    assertNoPersonalData(events);
    await s.advance(12);
    assert.equal((await getCase(caseView.id)).state, 'AFSLUTTET');
    assert.equal(handOverOf(caseView.id), undefined);
  });

  it('a case from POST /v1/cases sends its own påkrav to the debtor and is handed over (with the CPR, to the partner alone) on + 11', async () => {
    const today = await s.today();
    const body = {
      externalReference: 'sag-scenario-1',
      fordringer: [{ hovedstolOere: 250_000, forfaldsdato: addDays(today, -20) }],
      skyldnere: [{ skyldnerType: 'person', navn: 'Jens Skyldner', email: 'jens@skyldner.dk', cpr: '0101801234' }],
    };
    const mailsBefore = s.mails().length;
    const res = await call(s.api.app, 'POST', '/v1/cases', { key: s.org.apiKey, body });
    assert.equal(res.status, 201, res.raw);
    await s.settle();
    const id = res.body.data.id as string;
    let c = await getCase(id);
    assert.deepEqual([c.state, c.paakravFrist, c.eventVersion], ['PAAKRAV_SENDT', addDays(today, 10), 3]);
    assert.equal(s.mails().slice(mailsBefore).filter((m) => m.includes(`case-paakrav-${id}@`)).length, 1);
    await advanceTo(addDays(today, 11));
    c = await getCase(id);
    assert.equal(c.state, 'OVERDRAGET');
    const doc = handOverOf(id) as { debtors: { cpr: string | null }[] } | undefined;
    assert.equal(doc?.debtors[0]?.cpr, '0101801234');
    const events = await caseEvents(id);
    assertNoPersonalData(events);
    assert.ok(!JSON.stringify(events).includes('0101801234'));
  });

  it('autoCollections: the engine collects on the demand letter deadline + 1 day, and the case goes on from there', async () => {
    await settings({ autoCollections: true });
    const customerId = await s.customer(PERSON);
    const inv = await s.issue({ customerId, paymentTermsDays: 14 });
    const demandOn = addDays(inv.dueDate, 27);
    // The demand letter's deadline (sent + 10): not yet.
    await advanceTo(addDays(demandOn, 10));
    assert.equal((await s.invoice(inv.id)).status, 'overdue');
    const [none] = await testDb().db.sql`SELECT 1 FROM collection_cases WHERE invoice_id = ${inv.id}`;
    assert.equal(none, undefined);
    await advanceTo(addDays(demandOn, 11));
    assert.equal((await s.invoice(inv.id)).status, 'collections');
    const [row] = await testDb().db.sql<{ id: string }[]>`SELECT id FROM collection_cases WHERE invoice_id = ${inv.id}`;
    assert.ok(row, 'the case');
    // The demand letter is the påkrav: its deadline has run, so the hand-over is due on the same day.
    const c = await getCase(row.id);
    assert.deepEqual([c.state, c.paakravFrist, c.eventVersion], ['OVERDRAGET', addDays(demandOn, 10), 5]);
    assert.ok(handOverOf(row.id));
    // A repeat collect finds the engine's case.
    const again = await call(s.api.app, 'POST', `/v1/invoices/${inv.id}/collect`, { key: s.org.apiKey });
    assert.deepEqual([again.status, again.body.data.id, again.body.meta.replayed], [200, row.id, true]);
    await settings({});
  });

  it('autoCollections with the principal paid: only fees left, nothing is collected', async () => {
    await settings({ autoCollections: true });
    const customerId = await s.customer(PERSON);
    const inv = await s.issue({ customerId, paymentTermsDays: 14 });
    const demandOn = addDays(inv.dueDate, 27);
    await advanceTo(addDays(demandOn, 1));
    await s.pay(inv.id, inv.grossOere);
    await advanceTo(addDays(demandOn, 12));
    const [none] = await testDb().db.sql`SELECT 1 FROM collection_cases WHERE invoice_id = ${inv.id}`;
    assert.equal(none, undefined);
    assert.equal((await s.invoice(inv.id)).status, 'overdue');
    await settings({});
  });

  it('withdraw-case: TILBAGEKALDT before the hand-over, nothing handed over; a second withdrawal is refused', async () => {
    await settings({ maxReminders: 0 });
    const customerId = await s.customer(PERSON);
    const inv = await s.issue({ customerId, paymentTermsDays: 14 });
    await advanceTo(addDays(inv.dueDate, 1));
    const caseView = await collect(inv.id);
    const env = { ...process.env, DATABASE_URL: process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL };
    const admin = (args: string[]): Promise<Run> => runScript('services/admin/cli.ts', args, env);
    const run = await admin(['withdraw-case', '--org', s.org.organizationId, '--case', caseView.id, '--json']);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout), {
      organizationId: s.org.organizationId, caseId: caseView.id, caseNumber: caseView.caseNumber, from: 'PAAKRAV_SENDT', state: 'TILBAGEKALDT', eventVersion: 5,
    });
    const again = await admin(['withdraw-case', '--org', s.org.organizationId, '--case', caseView.id]);
    assert.equal(again.code, 1, again.stdout);
    const c = await getCase(caseView.id);
    assert.deepEqual([c.state, c.status, c.eventVersion], ['TILBAGEKALDT', 'lukket', 5]);
    assert.deepEqual(eventShape(await caseEvents(caseView.id)).slice(3), [
      [4, 'sag.tilbagekaldt', 'TILBAGEKALDT', 'lukket'],
      [5, 'sag.status_aendret', 'TILBAGEKALDT', 'lukket'],
    ]);
    await s.advance(12);
    assert.equal(handOverOf(caseView.id), undefined);
  });
});
