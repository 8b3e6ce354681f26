import assert from 'node:assert/strict';
import { call, createTestKey, createTestOrg, startTestApp, testDb, type ApiResponse, type TestApp, type TestOrg } from '../helpers/context.ts';
import { reminderSettingsBody } from '../helpers/reminders.ts';
import { addDays } from '../../services/shared/clock.ts';

/**
 * POST /v1/invoices/{id}/collect (docs/collections.md, "Collect: from an invoice to a case") through the
 * real app: the refusals in their order, the case and the invoice's hand-over in one transaction, the repeat and the
 * race answered with the same case. There is no workflow engine in this tier: the case stays in OPRETTET with its
 * wake-index row due.
 */
describe('POST /v1/invoices/{id}/collect', () => {
  let t: TestApp;
  const sql = () => testDb().db.sql;
  const line = (oere: number) => ({ description: 'Konsulentydelse', quantity: 1, unitPriceOere: oere, vatRateBps: 0, vatExemptionReason: 'ML13' });

  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  function assertError(res: ApiResponse, status: number, code: string): void {
    assert.equal(res.status, status, res.raw);
    assert.deepEqual(res.body, { error: { code, message: res.body.error.message, requestId: res.headers['request-id'] } });
    assert.ok(res.body.error.message.length > 0);
  }

  interface Inv {
    org: TestOrg;
    invoiceId: string;
    dueDate: string;
    number: number;
  }

  const today = async (org: TestOrg): Promise<string> => (await call(t.app, 'GET', '/v1/test-clock', { key: org.apiKey })).body.data.today as string;
  const advance = async (org: TestOrg, days: number): Promise<string> => {
    const res = await call(t.app, 'POST', '/v1/test-clock/advance', { key: org.apiKey, body: { days } });
    assert.equal(res.status, 200, res.raw);
    return res.body.data.today as string;
  };
  const putSettings = async (org: TestOrg, settings: Record<string, unknown>) => {
    const res = await call(t.app, 'PUT', '/v1/reminder-settings', { key: org.apiKey, body: reminderSettingsBody(settings) });
    assert.equal(res.status, 200, res.raw);
  };
  /** A fresh organisation (settings applied), a customer and an issued invoice due in 14 days; `draft`: not issued. */
  const newInvoice = async (opts: { settings?: Record<string, unknown>; grossOere?: number; draft?: boolean; externalReference?: string } = {}): Promise<Inv> => {
    const org = await createTestOrg();
    if (opts.settings) await putSettings(org, opts.settings);
    const cust = await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: { type: 'company', name: 'Skyldner ApS', email: 'bogholderi@skyldner.example' } });
    assert.equal(cust.status, 201, cust.raw);
    const res = await call(t.app, 'POST', `/v1/invoices${opts.draft ? '' : '?issue=true'}`, {
      key: org.apiKey,
      body: { customerId: cust.body.data.id, lines: [line(opts.grossOere ?? 50_000)], ...(opts.externalReference ? { externalReference: opts.externalReference } : {}) },
    });
    assert.equal(res.status, 201, res.raw);
    return { org, invoiceId: res.body.data.id, dueDate: res.body.data.dueDate, number: res.body.data.number };
  };
  const collect = (inv: Inv, opts: { key?: string | null; invoiceId?: string; idempotencyKey?: string } = {}) =>
    call(t.app, 'POST', `/v1/invoices/${opts.invoiceId ?? inv.invoiceId}/collect`, {
      key: opts.key === undefined ? inv.org.apiKey : opts.key,
      ...(opts.idempotencyKey ? { idempotencyKey: opts.idempotencyKey } : {}),
    });
  const pastDue = async (inv: Inv, days = 1) => {
    const now = await today(inv.org);
    const diff = Math.round((Date.parse(`${addDays(inv.dueDate, days)}T00:00:00Z`) - Date.parse(`${now}T00:00:00Z`)) / 86_400_000);
    if (diff > 0) await advance(inv.org, diff);
  };
  const remind = async (inv: Inv) => {
    const res = await call(t.app, 'POST', `/v1/invoices/${inv.invoiceId}/reminders`, { key: inv.org.apiKey });
    assert.equal(res.status, 200, res.raw);
    return res.body.data;
  };
  const pay = async (inv: Inv, amountOere: number) => {
    const res = await call(t.app, 'POST', `/v1/invoices/${inv.invoiceId}/payments`, { key: inv.org.apiKey, body: { amountOere, paymentDate: await today(inv.org) } });
    assert.equal(res.status, 201, res.raw);
  };
  const getInvoice = async (inv: Inv) => (await call(t.app, 'GET', `/v1/invoices/${inv.invoiceId}`, { key: inv.org.apiKey })).body.data;
  const casesOf = async (org: TestOrg) => [...await sql()<{ id: string; invoice_id: string; case_number: number; state: string }[]>`
    SELECT id, invoice_id, case_number::int AS case_number, state FROM collection_cases WHERE organization_id = ${org.organizationId} ORDER BY case_number`];
  const eventRows = async (org: TestOrg, entityId: string) => [...await sql()<{ type: string; entity_family: string; sekvensnummer: number; data: Record<string, unknown> }[]>`
    SELECT type, entity_family, sekvensnummer, data FROM events WHERE organization_id = ${org.organizationId} AND entity_id = ${entityId} ORDER BY sekvensnummer`];
  const wakeRows = async (org: TestOrg) => [...await sql()<{ service: string; key: string }[]>`
    SELECT service, key FROM wake_index WHERE organization_id = ${org.organizationId} AND service IN ('Dunning', 'Case') ORDER BY service`];

  describe('refusals, all 422, in their order', () => {
    it('a draft: invoice_not_issued', async () => {
      const inv = await newInvoice({ draft: true });
      assertError(await collect(inv), 422, 'invoice_not_issued');
    });

    it('balance 0 (paid, before its due date too): invoice_already_paid', async () => {
      const inv = await newInvoice();
      await pay(inv, 50_000);
      assertError(await collect(inv), 422, 'invoice_already_paid');
    });

    it('due date today or later: invoice_not_due (before the reminder check)', async () => {
      const inv = await newInvoice();
      assertError(await collect(inv), 422, 'invoice_not_due');
      await pastDue(inv, 0);
      assert.equal(await today(inv.org), inv.dueDate);
      assertError(await collect(inv), 422, 'invoice_not_due');
    });

    it('the principal paid, a reminder fee left: only_fees_outstanding (before the reminder check)', async () => {
      const inv = await newInvoice();
      await pastDue(inv);
      const sent = await remind(inv);
      assert.equal(sent.feeOere, 10_000);
      await pay(inv, 50_000);
      assert.equal((await getInvoice(inv)).balanceOere, 10_000);
      assertError(await collect(inv), 422, 'only_fees_outstanding');
    });

    it('fewer reminders sent than maxReminders: reminder_flow_incomplete; complete after the last', async () => {
      const inv = await newInvoice({ settings: { maxReminders: 2 } });
      await pastDue(inv);
      assertError(await collect(inv), 422, 'reminder_flow_incomplete');
      await remind(inv);
      assertError(await collect(inv), 422, 'reminder_flow_incomplete');
      await remind(inv);
      assert.equal((await collect(inv)).status, 201);
    });

    it('3 years past due: claim_time_barred (after the reminder check)', async () => {
      const inv = await newInvoice();
      await pastDue(inv, 3 * 366);
      assertError(await collect(inv), 422, 'reminder_flow_incomplete');
      await putSettings(inv.org, { maxReminders: 0 });
      assertError(await collect(inv), 422, 'claim_time_barred');
      assert.deepEqual(await casesOf(inv.org), []);
      assert.equal((await getInvoice(inv)).status, 'issued');
    });
  });

  it('201 + Location: the case in OPRETTET, the invoice in collections with its event and timeline, sag.oprettet, dunning ended', async () => {
    const inv = await newInvoice({ settings: { maxReminders: 1 }, externalReference: 'erp-77' });
    await pastDue(inv, 8);
    await remind(inv);
    assert.equal((await wakeRows(inv.org)).length, 1, 'the dunning row');
    const res = await collect(inv);
    assert.equal(res.status, 201, res.raw);
    const [row] = await casesOf(inv.org);
    assert.ok(row);
    assert.equal(res.headers.location, `/v1/cases/${row.id}`);
    const d = res.body.data;
    assert.deepEqual(res.body, {
      data: {
        id: row.id,
        caseNumber: 1,
        externalReference: 'erp-77',
        fakturaId: inv.invoiceId,
        state: 'OPRETTET',
        status: 'aktiv',
        paakravFrist: null,
        eventVersion: 1,
        createdAt: d.createdAt,
        updatedAt: d.createdAt,
      },
      meta: {},
    });
    // What GET shows is what was answered.
    const read = await call(t.app, 'GET', `/v1/cases/${row.id}`, { key: inv.org.apiKey });
    assert.deepEqual(read.body.data, d);

    const invoice = await getInvoice(inv);
    assert.equal(invoice.status, 'collections');
    const timeline = (await call(t.app, 'GET', `/v1/invoices/${inv.invoiceId}/timeline?limit=200`, { key: inv.org.apiKey })).body.data as { code: string; data: unknown }[];
    assert.deepEqual(timeline.filter((e) => e.code === 'collections').map((e) => e.data), [{ caseId: row.id }]);
    const invoiceEvents = (await eventRows(inv.org, inv.invoiceId)).filter((e) => e.type === 'invoice.collections');
    assert.deepEqual(invoiceEvents.map((e) => [e.entity_family, e.data]), [
      ['invoice', { invoiceId: inv.invoiceId, number: invoice.number, caseId: row.id, balanceOere: invoice.balanceOere, externalReference: 'erp-77' }],
    ]);
    assert.deepEqual(await eventRows(inv.org, row.id), [
      { type: 'sag.oprettet', entity_family: 'sag', sekvensnummer: 1, data: { caseNumber: 1, state: 'OPRETTET', status: 'aktiv', fakturaId: inv.invoiceId, externalReference: 'erp-77' } },
    ]);
    // The invoice's dunning ended; the case's lifecycle is due now.
    assert.deepEqual(await wakeRows(inv.org), [{ service: 'Case', key: `${inv.org.organizationId}:${row.id}` }]);
    // Never reminded nor credited now; still payable.
    assertError(await call(t.app, 'POST', `/v1/invoices/${inv.invoiceId}/reminders`, { key: inv.org.apiKey }), 422, 'reminder_not_eligible');
    assertError(await call(t.app, 'POST', `/v1/invoices/${inv.invoiceId}/credit`, { key: inv.org.apiKey, body: { reason: 'Fejl' } }), 422, 'invoice_not_creditable');
    const reminders = await call(t.app, 'GET', `/v1/invoices/${inv.invoiceId}/reminders`, { key: inv.org.apiKey });
    assert.equal(reminders.body.meta.nextReminder, null);
  });

  it('a repeat under another key: 200, the same case, meta.replayed; still payable @cluster', async () => {
    const inv = await newInvoice({ settings: { maxReminders: 0 } });
    await pastDue(inv);
    const first = await collect(inv);
    assert.equal(first.status, 201, first.raw);
    const again = await collect(inv);
    assert.equal(again.status, 200, again.raw);
    assert.equal(again.headers.location, first.headers.location);
    assert.deepEqual(again.body, { data: first.body.data, meta: { replayed: true } });
    assert.equal((await eventRows(inv.org, first.body.data.id)).length, 1, 'one sag.oprettet');
    // Still payable: paying the balance marks it paid.
    await pay(inv, 50_000);
    assert.equal((await getInvoice(inv)).status, 'paid');
  });

  it('racing collects under different keys make one case; every answer carries it @cluster', async () => {
    const inv = await newInvoice({ settings: { maxReminders: 0 } });
    await pastDue(inv);
    const answers = await Promise.all(Array.from({ length: 5 }, () => collect(inv)));
    assert.deepEqual(answers.map((a) => a.status).sort(), [200, 200, 200, 200, 201]);
    const cases = await casesOf(inv.org);
    assert.equal(cases.length, 1);
    for (const a of answers) assert.equal(a.body.data.id, cases[0]!.id);
    assert.deepEqual((await eventRows(inv.org, inv.invoiceId)).filter((e) => e.type === 'invoice.collections').length, 1);
  });

  it("an unknown id, another organisation's and a non-UUID: the same 404 invoice_not_found", async () => {
    const inv = await newInvoice({ settings: { maxReminders: 0 } });
    await pastDue(inv);
    const other = await createTestOrg();
    const answers = [
      await collect(inv, { key: other.apiKey }),
      await collect(inv, { invoiceId: '0190a000-0000-7000-8000-000000000000' }),
      await collect(inv, { invoiceId: 'not-a-uuid' }),
    ];
    for (const a of answers) assertError(a, 404, 'invoice_not_found');
    assert.deepEqual(answers.map((a) => a.body.error.message), answers.map(() => answers[0]!.body.error.message));
    assert.deepEqual(await casesOf(inv.org), []);
  });

  it('needs cases:write (403 insufficient_scope, nothing done), and a key', async () => {
    const inv = await newInvoice({ settings: { maxReminders: 0 } });
    await pastDue(inv);
    const invoicesOnly = await createTestKey(inv.org, ['invoices:write', 'invoices:read', 'cases:read']);
    const res = await collect(inv, { key: invoicesOnly });
    assert.equal(res.status, 403, res.raw);
    assert.equal(res.body.error.code, 'insufficient_scope');
    assertError(await collect(inv, { key: null }), 401, 'unauthenticated');
    assert.deepEqual(await casesOf(inv.org), []);
    const casesWrite = await createTestKey(inv.org, ['cases:write']);
    assert.equal((await collect(inv, { key: casesWrite })).status, 201);
  });
});
