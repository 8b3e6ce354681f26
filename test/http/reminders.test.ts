import assert from 'node:assert/strict';
import {
  call,
  createTestKey,
  createTestOrg,
  newIdempotencyKey,
  startTestApp,
  testClock,
  testDb,
  type ApiResponse,
  type TestApp,
  type TestOrg,
} from '../helpers/context.ts';
import { insertReminder, reminderSettingsBody } from '../helpers/reminders.ts';
import { announcePastDue } from '../../services/customers/past-due-transitions.ts';
import { updateOrganization } from '../../services/organizations/update-organization.ts';
import { addDays } from '../../services/shared/clock.ts';

/**
 * GET and POST /v1/invoices/{id}/reminders (docs/api-conventions.md, "Reminders"; docs/reminders.md, "Ad-hoc
 * reminders"): the history with the engine's next planned step, and the ad-hoc reminder through the real app. There is
 * no workflow engine in this tier: a manual reminder's row is written with `delivery: 'pending'`, its document and mail
 * follow through the engine elsewhere. Invoices get past due on each organisation's sandbox test clock.
 */
describe('Reminder history and ad-hoc reminders', () => {
  let t: TestApp;
  const sql = () => testDb().db.sql;
  const line = (oere: number) => ({ description: 'Konsulentydelse', quantity: 1, unitPriceOere: oere, vatRateBps: 0, vatExemptionReason: 'ML13' });
  const ADDRESS = { street: 'Skyldnervej 3', postalCode: '8000', city: 'Aarhus C' };

  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  function assertError(res: ApiResponse, status: number, code: string, details?: { path: string; message: string }[]): void {
    assert.equal(res.status, status, res.raw);
    const error: Record<string, unknown> = { code, message: res.body.error.message, requestId: res.headers['request-id'] };
    if (details) error.details = details;
    assert.deepEqual(res.body, { error });
    assert.ok(typeof res.body.error.message === 'string' && res.body.error.message.length > 0, 'the message is a sentence');
  }

  interface Case {
    org: TestOrg;
    customerId: string;
    invoiceId: string;
    dueDate: string;
    grossOere: number;
  }

  const today = async (org: TestOrg): Promise<string> => (await call(t.app, 'GET', '/v1/test-clock', { key: org.apiKey })).body.data.today as string;
  const advance = async (org: TestOrg, days: number): Promise<string> => {
    const res = await call(t.app, 'POST', '/v1/test-clock/advance', { key: org.apiKey, body: { days } });
    assert.equal(res.status, 200, res.raw);
    return res.body.data.today as string;
  };
  const putSettings = async (org: TestOrg, settings: Record<string, unknown>) => {
    const body = reminderSettingsBody(settings);
    const res = await call(t.app, 'PUT', '/v1/reminder-settings', { key: org.apiKey, body });
    assert.equal(res.status, 200, res.raw);
  };
  const createCustomer = async (org: TestOrg, customer: Record<string, unknown>): Promise<string> => {
    const res = await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: { type: 'company', name: 'Skyldner ApS', ...customer } });
    assert.equal(res.status, 201, res.raw);
    return res.body.data.id as string;
  };
  const issueInvoice = async (org: TestOrg, customerId: string, grossOere: number): Promise<{ invoiceId: string; dueDate: string }> => {
    const res = await call(t.app, 'POST', '/v1/invoices?issue=true', { key: org.apiKey, body: { customerId, lines: [line(grossOere)] } });
    assert.equal(res.status, 201, res.raw);
    assert.equal(res.body.data.status, 'issued');
    return { invoiceId: res.body.data.id, dueDate: res.body.data.dueDate };
  };
  /** A fresh organisation, a customer and one issued invoice (due in 14 days, the default terms). */
  const newCase = async (
    opts: { customer?: Record<string, unknown>; grossOere?: number; org?: TestOrg; settings?: Record<string, unknown> } = {},
  ): Promise<Case> => {
    const org = opts.org ?? (await createTestOrg());
    if (opts.settings) await putSettings(org, opts.settings);
    const customerId = await createCustomer(org, opts.customer ?? { email: 'bogholderi@skyldner.example' });
    const grossOere = opts.grossOere ?? 50_000;
    const { invoiceId, dueDate } = await issueInvoice(org, customerId, grossOere);
    return { org, customerId, invoiceId, dueDate, grossOere };
  };
  /** Moves the case's clock to `days` after its due date; answers the new today. */
  const toDaysAfterDue = async (c: Case, days: number): Promise<string> => {
    const now = await today(c.org);
    const target = addDays(c.dueDate, days);
    const diff = Math.round((Date.parse(`${target}T00:00:00Z`) - Date.parse(`${now}T00:00:00Z`)) / 86_400_000);
    assert.ok(diff >= 1, `the clock is already at ${now}`);
    const reached = await advance(c.org, diff);
    assert.equal(reached, target);
    return reached;
  };

  const list = (c: Case, opts: { key?: string; invoiceId?: string } = {}) =>
    call(t.app, 'GET', `/v1/invoices/${opts.invoiceId ?? c.invoiceId}/reminders`, { key: opts.key ?? c.org.apiKey });
  const remind = (c: Case, opts: { key?: string; invoiceId?: string; idempotencyKey?: string | null } = {}) =>
    call(t.app, 'POST', `/v1/invoices/${opts.invoiceId ?? c.invoiceId}/reminders`, {
      key: opts.key ?? c.org.apiKey,
      ...(opts.idempotencyKey !== undefined ? { idempotencyKey: opts.idempotencyKey } : {}),
    });
  const getInvoice = async (c: Case, invoiceId = c.invoiceId) => {
    const res = await call(t.app, 'GET', `/v1/invoices/${invoiceId}`, { key: c.org.apiKey });
    assert.equal(res.status, 200, res.raw);
    return res.body.data;
  };
  const timeline = async (c: Case) => {
    const res = await call(t.app, 'GET', `/v1/invoices/${c.invoiceId}/timeline?limit=200`, { key: c.org.apiKey });
    assert.equal(res.status, 200, res.raw);
    return res.body.data as { code: string; at: string; data: Record<string, unknown> }[];
  };
  const events = async (org: TestOrg, type?: string) => {
    const res = await call(t.app, 'GET', `/v1/events?limit=200${type ? `&type=${type}` : ''}`, { key: org.apiKey });
    assert.equal(res.status, 200, res.raw);
    return res.body.data as { id: string; type: string; invoice?: { id: string; sekvensnummer: number }; customer?: { id: string; sekvensnummer: number }; data: Record<string, unknown> }[];
  };

  interface DbReminder {
    id: string;
    type: string;
    reminder_number: number | null;
    fee_oere: number;
    fee_id: string | null;
    channel: string | null;
    status: string;
    failure_code: string | null;
    demand_letter: boolean;
    source: string;
    sent_on: string;
    deadline: string;
    delivery: string;
    document_sha256: Buffer | null;
    xmin: string;
  }
  const dbReminders = async (c: Case): Promise<DbReminder[]> => [...await sql()<DbReminder[]>`
    SELECT id, type, reminder_number, fee_oere::int AS fee_oere, fee_id, channel, status, failure_code, demand_letter, source,
           sent_on::text AS sent_on, deadline::text AS deadline, delivery, document_sha256, xmin::text AS xmin
    FROM reminders WHERE organization_id = ${c.org.organizationId} AND invoice_id = ${c.invoiceId} ORDER BY reminder_number`];
  const dbFees = async (c: Case) => [...await sql()<{ id: string; kind: string; amount_oere: number; customer_id: string }[]>`
    SELECT id, kind, amount_oere::int AS amount_oere, customer_id FROM invoice_fees
    WHERE organization_id = ${c.org.organizationId} AND invoice_id = ${c.invoiceId} ORDER BY created_at, id`];
  const dbWake = async (c: Case) => {
    const [row] = await sql()<{ due_at: Date }[]>`
      SELECT due_at FROM wake_index WHERE service = 'Dunning' AND key = ${`${c.org.organizationId}:${c.invoiceId}`}`;
    return row?.due_at;
  };
  const copenhagenMidnight = async (date: string) => {
    const [row] = await sql()<{ at: Date }[]>`SELECT (${date}::date)::timestamp AT TIME ZONE 'Europe/Copenhagen' AS at`;
    return row!.at;
  };

  /** Nothing of a reminder was written: no row, no fee, no timeline entry, no event, the invoice as it was. */
  const assertNothingRecorded = async (c: Case, before: { status: string; balanceOere: number; reminderFeeOere: number }) => {
    assert.deepEqual(await dbReminders(c), []);
    assert.deepEqual(await dbFees(c), []);
    assert.deepEqual((await timeline(c)).filter((e) => ['reminder', 'collections_ready'].includes(e.code)), []);
    assert.deepEqual((await events(c.org, 'invoice.overdue')), []);
    const inv = await getInvoice(c);
    assert.deepEqual({ status: inv.status, balanceOere: inv.balanceOere, reminderFeeOere: inv.reminderFeeOere }, before);
  };

  describe('GET /v1/invoices/{id}/reminders', () => {
    it('an issued invoice without reminders: no items, the plan of 3 and reminder 1 on due + 7', async () => {
      const c = await newCase();
      const res = await list(c);
      assert.equal(res.status, 200, res.raw);
      assert.deepEqual(res.body, { data: [], meta: { maxReminders: 3, nextReminder: { type: 'reminder', reminderNumber: 1, date: addDays(c.dueDate, 7) } } });
      // Reading writes nothing.
      assert.deepEqual(await dbReminders(c), []);
    });

    it('with the payment reminder enabled the next step is the payment reminder on due + paymentReminderDays', async () => {
      const c = await newCase({ settings: { paymentReminderEnabled: true, paymentReminderDays: 4 } });
      const res = await list(c);
      assert.equal(res.status, 200, res.raw);
      assert.deepEqual(res.body, { data: [], meta: { maxReminders: 3, nextReminder: { type: 'payment_reminder', reminderNumber: null, date: addDays(c.dueDate, 4) } } });
    });

    it('follows the settings: a custom cadence moves the date; maxReminders 0 plans nothing (nextReminder null)', async () => {
      const c = await newCase({ settings: { cadence: [{ reminderNumber: 1, daysAfterDue: 5 }, { reminderNumber: 2, daysAfterDue: 20 }, { reminderNumber: 3, daysAfterDue: 30 }] } });
      assert.deepEqual((await list(c)).body.meta, { maxReminders: 3, nextReminder: { type: 'reminder', reminderNumber: 1, date: addDays(c.dueDate, 5) } });
      await putSettings(c.org, { maxReminders: 0 });
      const res = await list(c);
      assert.equal(res.status, 200, res.raw);
      assert.deepEqual(res.body, { data: [], meta: { maxReminders: 0, nextReminder: null } });
    });

    it('a draft: 422 invoice_not_issued', async () => {
      const org = await createTestOrg();
      const customerId = await createCustomer(org, { email: 'a@b.example' });
      const draft = await call(t.app, 'POST', '/v1/invoices', { key: org.apiKey, body: { customerId, lines: [line(10_000)] } });
      assert.equal(draft.status, 201, draft.raw);
      const res = await call(t.app, 'GET', `/v1/invoices/${draft.body.data.id}/reminders`, { key: org.apiKey });
      assertError(res, 422, 'invoice_not_issued');
    });

    it('an unknown id, another organisation\'s id and a non-UUID answer the identical 404 invoice_not_found', async () => {
      const c = await newCase();
      const other = await createTestOrg();
      const unknown = await call(t.app, 'GET', '/v1/invoices/01890000-0000-7000-8000-000000000000/reminders', { key: c.org.apiKey });
      const foreign = await call(t.app, 'GET', `/v1/invoices/${c.invoiceId}/reminders`, { key: other.apiKey });
      const garbage = await call(t.app, 'GET', '/v1/invoices/not-a-uuid/reminders', { key: c.org.apiKey });
      for (const res of [unknown, foreign, garbage]) assertError(res, 404, 'invoice_not_found');
      assert.equal(foreign.body.error.message, unknown.body.error.message);
      assert.equal(garbage.body.error.message, unknown.body.error.message);
    });

    it('needs reminders:read: 403 insufficient_scope; reminders:read alone is enough', async () => {
      const c = await newCase();
      const noRead = await createTestKey(c.org, ['reminders:write', 'invoices:read']);
      assertError(await list(c, { key: noRead }), 403, 'insufficient_scope', [{ path: '', message: 'required scope: reminders:read' }]);
      const readOnly = await createTestKey(c.org, ['reminders:read']);
      assert.equal((await list(c, { key: readOnly })).status, 200);
    });
  });

  describe('POST /v1/invoices/{id}/reminders', () => {
    it('sends reminder 1 on an overdue invoice: the fee, the history item, overdue with invoice.overdue once, the timeline, the fee row', async () => {
      const c = await newCase({ customer: { email: 'bogholderi@skyldner.example', externalReference: 'erp-42' } });
      const day = await toDaysAfterDue(c, 3);
      const before = await getInvoice(c);
      assert.equal(before.status, 'issued');
      const startedAt = Date.now();

      const res = await remind(c);
      assert.equal(res.status, 200, res.raw);
      assert.deepEqual(res.body, { data: { reminderNumber: 1, feeOere: 10_000, collectionsReady: false }, meta: {} });

      // The history.
      const history = await list(c);
      assert.equal(history.status, 200, history.raw);
      assert.equal(history.body.data.length, 1);
      const item = history.body.data[0];
      assert.deepEqual(item, {
        id: item.id, type: 'reminder', reminderNumber: 1, feeOere: 10_000, interestOere: 0, compensationOere: 0, channel: 'email', status: 'sent', failureCode: null,
        demandLetter: false, deadline: addDays(day, 10), source: 'manual', sentAt: item.sentAt,
      });
      const clockNow = Date.parse((await call(t.app, 'GET', '/v1/test-clock', { key: c.org.apiKey })).body.data.now);
      const sentAt = Date.parse(item.sentAt);
      assert.ok(sentAt <= clockNow && sentAt >= clockNow - (Date.now() - startedAt) - 1000, 'sentAt is the business now of the request');
      // Reminder 2 stays planned on due + 14, which is more than 10 days after reminder 1's fee (due + 3).
      assert.deepEqual(history.body.meta, { maxReminders: 3, nextReminder: { type: 'reminder', reminderNumber: 2, date: addDays(c.dueDate, 14) } });

      // The invoice: overdue, the fee on the balance.
      const after = await getInvoice(c);
      assert.equal(after.status, 'overdue');
      assert.equal(after.reminderFeeOere, 10_000);
      assert.equal(after.balanceOere, before.balanceOere + 10_000);
      assert.equal(after.balanceOere, c.grossOere + 10_000);

      // The rows: the reminder (pending delivery, no document yet) and its fee.
      const [row, ...moreRows] = await dbReminders(c);
      assert.deepEqual(moreRows, []);
      const fees = await dbFees(c);
      assert.deepEqual(fees, [{ id: row!.fee_id, kind: 'reminder', amount_oere: 10_000, customer_id: c.customerId }]);
      assert.deepEqual(
        { ...row, xmin: undefined },
        {
          id: item.id, type: 'reminder', reminder_number: 1, fee_oere: 10_000, fee_id: fees[0]!.id, channel: 'email', status: 'sent', failure_code: null,
          demand_letter: false, source: 'manual', sent_on: day, deadline: addDays(day, 10), delivery: 'pending', document_sha256: null, xmin: undefined,
        },
      );
      // The engine is due now to render and deliver it.
      const wake = await dbWake(c);
      assert.ok(wake, 'the Dunning object is in the wake index');
      assert.equal(wake.getTime(), (await copenhagenMidnight(day)).getTime());

      // One invoice.overdue, with the balance the reminder left.
      const overdue = await events(c.org, 'invoice.overdue');
      assert.equal(overdue.length, 1);
      assert.deepEqual(overdue[0]!.data, {
        invoiceId: c.invoiceId, number: before.number, dueDate: c.dueDate, balanceOere: c.grossOere + 10_000, reminderId: item.id, externalReference: before.externalReference,
      });
      assert.equal(overdue[0]!.invoice!.id, c.invoiceId);

      // The timeline.
      const entries = (await timeline(c)).filter((e) => e.code === 'reminder');
      assert.equal(entries.length, 1);
      assert.deepEqual(entries[0]!.data, { reminderId: item.id, type: 'reminder', reminderNumber: 1, feeOere: 10_000, channel: 'email', status: 'sent' });
      assert.equal(entries[0]!.at, item.sentAt);
    });

    it('numbers on: a second the same day is free (10-day rule), the third 10 days later carries the fee and is the demand letter; a fourth is refused', async () => {
      const c = await newCase();
      const day1 = await toDaysAfterDue(c, 1);
      const first = await remind(c);
      assert.deepEqual(first.body, { data: { reminderNumber: 1, feeOere: 10_000, collectionsReady: false }, meta: {} });
      const second = await remind(c);
      assert.equal(second.status, 200, second.raw);
      assert.deepEqual(second.body, { data: { reminderNumber: 2, feeOere: 0, collectionsReady: false }, meta: {} });
      // The plan moves on with it: reminder 3 no sooner than 10 days after reminder 1's fee.
      assert.deepEqual((await list(c)).body.meta, { maxReminders: 3, nextReminder: { type: 'reminder', reminderNumber: 3, date: addDays(c.dueDate, 21) } });

      const day3 = await advance(c.org, 10);
      assert.equal(day3, addDays(day1, 10));
      const third = await remind(c);
      assert.equal(third.status, 200, third.raw);
      assert.deepEqual(third.body, { data: { reminderNumber: 3, feeOere: 10_000, collectionsReady: true }, meta: {} });

      const history = await list(c);
      assert.deepEqual(history.body.meta, { maxReminders: 3, nextReminder: null });
      assert.deepEqual(
        history.body.data.map((r: Record<string, unknown>) => [r.reminderNumber, r.feeOere, r.channel, r.status, r.demandLetter, r.deadline, r.source]),
        [
          [1, 10_000, 'email', 'sent', false, addDays(day1, 10), 'manual'],
          [2, 0, 'email', 'sent', false, addDays(day1, 10), 'manual'],
          [3, 10_000, 'email', 'sent', true, addDays(day3, 10), 'manual'],
        ],
      );
      const rows = await dbReminders(c);
      assert.deepEqual(rows.map((r) => [r.reminder_number, r.fee_oere, r.fee_id !== null, r.sent_on, r.delivery]), [
        [1, 10_000, true, day1, 'pending'],
        [2, 0, false, day1, 'pending'],
        [3, 10_000, true, day3, 'pending'],
      ]);
      assert.equal((await dbFees(c)).length, 2);

      const inv = await getInvoice(c);
      assert.equal(inv.status, 'overdue');
      assert.equal(inv.reminderFeeOere, 20_000);
      assert.equal(inv.balanceOere, c.grossOere + 20_000);
      const [flag] = await sql()<{ collections_ready: boolean }[]>`SELECT collections_ready FROM invoices WHERE id = ${c.invoiceId}`;
      assert.equal(flag!.collections_ready, true);
      const codes = (await timeline(c)).map((e) => e.code).filter((code) => code === 'reminder' || code === 'collections_ready');
      assert.deepEqual(codes, ['reminder', 'reminder', 'reminder', 'collections_ready']);
      assert.equal((await events(c.org, 'invoice.overdue')).length, 1, 'invoice.overdue once, on the first reminder');

      const fourth = await remind(c);
      assertError(fourth, 422, 'reminder_limit_reached');
      assert.equal((await dbReminders(c)).length, 3);
      assert.equal((await dbFees(c)).length, 2);
      assert.equal((await timeline(c)).filter((e) => e.code === 'reminder').length, 3);
      assert.equal((await getInvoice(c)).balanceOere, c.grossOere + 20_000);
    });

    it('with maxReminders 2 the second is the demand letter and makes the invoice collections-ready; a third is still allowed (3 ever)', async () => {
      const c = await newCase({ settings: { maxReminders: 2 } });
      await toDaysAfterDue(c, 1);
      assert.deepEqual((await remind(c)).body.data, { reminderNumber: 1, feeOere: 10_000, collectionsReady: false });
      assert.deepEqual((await remind(c)).body.data, { reminderNumber: 2, feeOere: 0, collectionsReady: true });
      const history = await list(c);
      assert.deepEqual(history.body.data.map((r: { demandLetter: boolean }) => r.demandLetter), [false, true]);
      assert.deepEqual(history.body.meta, { maxReminders: 2, nextReminder: null });
      const third = await remind(c);
      assert.equal(third.status, 200, third.raw);
      assert.equal(third.body.data.reminderNumber, 3);
      assertError(await remind(c), 422, 'reminder_limit_reached');
    });

    it("counts automatic reminders too: after the engine's payment reminder and reminder 1 the manual one is number 2; the payment reminder is not counted", async () => {
      const c = await newCase({ settings: { paymentReminderEnabled: true, paymentReminderDays: 3 } });
      const day = await toDaysAfterDue(c, 12);
      const inv = { invoiceId: c.invoiceId, customerId: c.customerId, number: (await getInvoice(c)).number as number };
      await insertReminder(c.org, inv, { type: 'payment_reminder', sentOn: addDays(c.dueDate, 3), deadline: addDays(c.dueDate, 13) });
      await insertReminder(c.org, inv, { reminderNumber: 1, feeOere: 10_000, sentOn: addDays(c.dueDate, 7), deadline: addDays(c.dueDate, 17) });
      // 5 days after the automatic reminder's fee: free.
      const res = await remind(c);
      assert.equal(res.status, 200, res.raw);
      assert.deepEqual(res.body.data, { reminderNumber: 2, feeOere: 0, collectionsReady: false });
      const history = await list(c);
      assert.deepEqual(
        history.body.data.map((r: Record<string, unknown>) => [r.type, r.reminderNumber, r.feeOere, r.source, r.deadline]),
        [
          ['payment_reminder', null, 0, 'automatic', addDays(c.dueDate, 13)],
          ['reminder', 1, 10_000, 'automatic', addDays(c.dueDate, 17)],
          ['reminder', 2, 0, 'manual', addDays(day, 10)],
        ],
      );
      assert.deepEqual(history.body.meta.nextReminder, { type: 'reminder', reminderNumber: 3, date: addDays(c.dueDate, 21) });
      assert.equal((await remind(c)).body.data.reminderNumber, 3);
      assertError(await remind(c), 422, 'reminder_limit_reached');
    });

    describe('422 reminder_not_eligible, nothing recorded', () => {
      it('a draft', async () => {
        const org = await createTestOrg();
        const customerId = await createCustomer(org, { email: 'a@b.example' });
        const draft = await call(t.app, 'POST', '/v1/invoices', { key: org.apiKey, body: { customerId, lines: [line(10_000)] } });
        assert.equal(draft.status, 201, draft.raw);
        const c: Case = { org, customerId, invoiceId: draft.body.data.id, dueDate: '', grossOere: 10_000 };
        assertError(await remind(c), 422, 'reminder_not_eligible');
        assert.deepEqual(await dbReminders(c), []);
        assert.equal((await getInvoice(c)).status, 'draft');
      });

      it('not yet past due: before the due date and on the due date itself', async () => {
        const c = await newCase();
        const untouched = { status: 'issued', balanceOere: c.grossOere, reminderFeeOere: 0 };
        assertError(await remind(c), 422, 'reminder_not_eligible');
        await assertNothingRecorded(c, untouched);
        await toDaysAfterDue(c, -1);
        assertError(await remind(c), 422, 'reminder_not_eligible');
        assert.equal(await advance(c.org, 1), c.dueDate);
        assertError(await remind(c), 422, 'reminder_not_eligible');
        await assertNothingRecorded(c, untouched);
        // The day after: eligible.
        await advance(c.org, 1);
        assert.equal((await remind(c)).status, 200);
      });

      it('paid in full (balance 0)', async () => {
        const c = await newCase();
        const day = await toDaysAfterDue(c, 5);
        const paid = await call(t.app, 'POST', `/v1/invoices/${c.invoiceId}/payments`, { key: c.org.apiKey, body: { amountOere: c.grossOere, paymentDate: day } });
        assert.equal(paid.status, 201, paid.raw);
        assertError(await remind(c), 422, 'reminder_not_eligible');
        await assertNothingRecorded(c, { status: 'paid', balanceOere: 0, reminderFeeOere: 0 });
        assert.deepEqual((await list(c)).body, { data: [], meta: { maxReminders: 3, nextReminder: null } });
      });

      it('only reminder fees outstanding (the principal paid): a fee is never reminded', async () => {
        const c = await newCase();
        const day = await toDaysAfterDue(c, 3);
        assert.equal((await remind(c)).body.data.feeOere, 10_000);
        const paid = await call(t.app, 'POST', `/v1/invoices/${c.invoiceId}/payments`, { key: c.org.apiKey, body: { amountOere: c.grossOere, paymentDate: day } });
        assert.equal(paid.status, 201, paid.raw);
        assert.equal(paid.body.data.balanceOere, 10_000);
        await advance(c.org, 10);
        assertError(await remind(c), 422, 'reminder_not_eligible');
        assert.equal((await dbReminders(c)).length, 1);
        assert.equal((await dbFees(c)).length, 1);
        assert.equal((await list(c)).body.meta.nextReminder, null);
      });

      it('in collections', async () => {
        const c = await newCase();
        await toDaysAfterDue(c, 30);
        // No hand-over route in this tier: the status as the collection hand-over writes it.
        await sql()`UPDATE invoices SET status = 'collections' WHERE id = ${c.invoiceId}`;
        assertError(await remind(c), 422, 'reminder_not_eligible');
        await assertNothingRecorded(c, { status: 'collections', balanceOere: c.grossOere, reminderFeeOere: 0 });
        assert.equal((await list(c)).body.meta.nextReminder, null);
      });

      it('credited in full (balance 0, status issued)', async () => {
        const c = await newCase();
        await toDaysAfterDue(c, 5);
        const credit = await call(t.app, 'POST', `/v1/invoices/${c.invoiceId}/credit`, { key: c.org.apiKey, body: { reason: 'Fejlfaktureret' } });
        assert.equal(credit.status, 201, credit.raw);
        assertError(await remind(c), 422, 'reminder_not_eligible');
        await assertNothingRecorded(c, { status: 'issued', balanceOere: 0, reminderFeeOere: 0 });
      });

      it('a credit note id: 422 reminder_not_eligible (a credit note is never reminded); its history is empty with nothing planned', async () => {
        const c = await newCase();
        await toDaysAfterDue(c, 5);
        const credit = await call(t.app, 'POST', `/v1/invoices/${c.invoiceId}/credit`, { key: c.org.apiKey, body: { reason: 'Fejlfaktureret' } });
        assert.equal(credit.status, 201, credit.raw);
        const creditNoteId = credit.body.data.id as string;
        assertError(await remind(c, { invoiceId: creditNoteId }), 422, 'reminder_not_eligible');
        const history = await list(c, { invoiceId: creditNoteId });
        assert.equal(history.status, 200, history.raw);
        assert.deepEqual(history.body, { data: [], meta: { maxReminders: 3, nextReminder: null } });
        const [count] = await sql()<{ n: number }[]>`SELECT count(*)::int AS n FROM reminders WHERE organization_id = ${c.org.organizationId}`;
        assert.equal(count!.n, 0);
      });
    });

    it('an unknown id, another organisation\'s id and a non-UUID: the identical 404 invoice_not_found', async () => {
      const c = await newCase();
      await toDaysAfterDue(c, 3);
      const other = await createTestOrg();
      const unknown = await remind(c, { invoiceId: '01890000-0000-7000-8000-000000000000' });
      const foreign = await remind(c, { key: other.apiKey });
      const garbage = await remind(c, { invoiceId: 'not-a-uuid' });
      for (const res of [unknown, foreign, garbage]) assertError(res, 404, 'invoice_not_found');
      assert.equal(foreign.body.error.message, unknown.body.error.message);
      assert.deepEqual(await dbReminders(c), []);
    });

    describe('the channel', () => {
      it('no e-mail and letterFallback off: 422 customer_email_missing, nothing recorded', async () => {
        const c = await newCase({ customer: { address: ADDRESS } });
        await toDaysAfterDue(c, 3);
        const res = await remind(c);
        assertError(res, 422, 'customer_email_missing');
        await assertNothingRecorded(c, { status: 'issued', balanceOere: c.grossOere, reminderFeeOere: 0 });
        assert.deepEqual((await list(c)).body.data, []);
      });

      it('letterFallback on but no complete postal address: 422 customer_address_missing, nothing recorded', async () => {
        const c = await newCase({ settings: { letterFallback: true }, customer: { address: { street: 'Skyldnervej 3', postalCode: '8000' } } });
        await toDaysAfterDue(c, 3);
        assertError(await remind(c), 422, 'customer_address_missing');
        await assertNothingRecorded(c, { status: 'issued', balanceOere: c.grossOere, reminderFeeOere: 0 });
      });

      it('letterFallback on with an address: a letter, with the fee', async () => {
        const c = await newCase({ settings: { letterFallback: true }, customer: { address: ADDRESS } });
        const day = await toDaysAfterDue(c, 3);
        const res = await remind(c);
        assert.equal(res.status, 200, res.raw);
        assert.deepEqual(res.body, { data: { reminderNumber: 1, feeOere: 10_000, collectionsReady: false }, meta: {} });
        const [item] = (await list(c)).body.data;
        assert.deepEqual(item, {
          id: item.id, type: 'reminder', reminderNumber: 1, feeOere: 10_000, interestOere: 0, compensationOere: 0, channel: 'letter', status: 'sent', failureCode: null,
          demandLetter: false, deadline: addDays(day, 10), source: 'manual', sentAt: item.sentAt,
        });
        assert.deepEqual((await dbReminders(c)).map((r) => [r.channel, r.delivery]), [['letter', 'pending']]);
        assert.equal((await getInvoice(c)).status, 'overdue');
      });

      it('an e-mail wins over letterFallback', async () => {
        const c = await newCase({ settings: { letterFallback: true }, customer: { email: 'a@b.example', address: ADDRESS } });
        await toDaysAfterDue(c, 3);
        assert.equal((await remind(c)).status, 200);
        assert.equal((await list(c)).body.data[0].channel, 'email');
      });
    });

    describe('idempotency and scopes', () => {
      it('the same Idempotency-Key replays the first answer and sends no second reminder @cluster', async () => {
        const c = await newCase();
        await toDaysAfterDue(c, 3);
        const key = newIdempotencyKey();
        const first = await remind(c, { idempotencyKey: key });
        assert.equal(first.status, 200, first.raw);
        const replay = await remind(c, { idempotencyKey: key });
        assert.equal(replay.status, 200, replay.raw);
        assert.equal(replay.headers['idempotent-replayed'], 'true');
        assert.deepEqual(replay.body, { data: first.body.data, meta: { replayed: true } });
        assert.equal((await dbReminders(c)).length, 1);
        assert.equal((await dbFees(c)).length, 1);
        assert.equal((await events(c.org, 'invoice.overdue')).length, 1);
        // A new key is a new reminder.
        assert.equal((await remind(c)).body.data.reminderNumber, 2);
      });

      it('a refusal is replayed with its key too, even once the cause is gone', async () => {
        const c = await newCase({ customer: { address: ADDRESS } });
        await toDaysAfterDue(c, 3);
        const key = newIdempotencyKey();
        assertError(await remind(c, { idempotencyKey: key }), 422, 'customer_email_missing');
        const patched = await call(t.app, 'PATCH', `/v1/customers/${c.customerId}`, { key: c.org.apiKey, body: { email: 'ny@skyldner.example' } });
        assert.equal(patched.status, 200, patched.raw);
        const replay = await remind(c, { idempotencyKey: key });
        assertError(replay, 422, 'customer_email_missing');
        assert.equal(replay.headers['idempotent-replayed'], 'true');
        assert.deepEqual(await dbReminders(c), []);
        assert.equal((await remind(c)).status, 200, 'a new key sends it');
      });

      it('no Idempotency-Key: 400 idempotency_key_missing, nothing recorded', async () => {
        const c = await newCase();
        await toDaysAfterDue(c, 3);
        const res = await remind(c, { idempotencyKey: null });
        assert.equal(res.status, 400, res.raw);
        assert.equal(res.body.error.code, 'idempotency_key_missing');
        await assertNothingRecorded(c, { status: 'issued', balanceOere: c.grossOere, reminderFeeOere: 0 });
      });

      it('a body with properties: 400 validation_failed', async () => {
        const c = await newCase();
        await toDaysAfterDue(c, 3);
        const res = await call(t.app, 'POST', `/v1/invoices/${c.invoiceId}/reminders`, { key: c.org.apiKey, body: { feeOere: 0 } });
        assert.equal(res.status, 400, res.raw);
        assert.equal(res.body.error.code, 'validation_failed');
        assert.deepEqual(await dbReminders(c), []);
      });

      it('needs reminders:write: 403 insufficient_scope, nothing recorded', async () => {
        const c = await newCase();
        await toDaysAfterDue(c, 3);
        const key = await createTestKey(c.org, ['reminders:read', 'invoices:write']);
        assertError(await remind(c, { key }), 403, 'insufficient_scope', [{ path: '', message: 'required scope: reminders:write' }]);
        assert.deepEqual(await dbReminders(c), []);
        const writer = await createTestKey(c.org, ['reminders:write']);
        assert.equal((await remind(c, { key: writer })).status, 200);
      });
    });

    it('5 concurrent POSTs on one invoice: reminders 1, 2, 3 exactly once each, and two 422 reminder_limit_reached @cluster', async () => {
      const c = await newCase();
      await toDaysAfterDue(c, 3);
      const results = await Promise.all(Array.from({ length: 5 }, () => remind(c)));
      const ok = results.filter((r) => r.status === 200);
      const refused = results.filter((r) => r.status !== 200);
      assert.deepEqual(ok.map((r) => r.body.data.reminderNumber).sort(), [1, 2, 3], results.map((r) => r.raw).join('\n'));
      assert.equal(refused.length, 2);
      for (const r of refused) assertError(r, 422, 'reminder_limit_reached');
      // The same day: only reminder 1 carries the fee.
      assert.deepEqual(ok.map((r) => r.body.data).sort((a, b) => a.reminderNumber - b.reminderNumber), [
        { reminderNumber: 1, feeOere: 10_000, collectionsReady: false },
        { reminderNumber: 2, feeOere: 0, collectionsReady: false },
        { reminderNumber: 3, feeOere: 0, collectionsReady: true },
      ]);
      assert.deepEqual((await dbReminders(c)).map((r) => r.reminder_number), [1, 2, 3]);
      assert.equal((await dbFees(c)).length, 1);
      assert.equal((await events(c.org, 'invoice.overdue')).length, 1);
      assert.equal((await timeline(c)).filter((e) => e.code === 'collections_ready').length, 1);
    });

    it('a fee that takes the customer over the past-due threshold writes customer.past_due in the reminder\'s transaction, once', async () => {
      const org = await createTestOrg();
      await testDb().db.tx((tx) => updateOrganization(tx, org.organizationId, { pastDueMinOere: 12_000, pastDueMinDays: 14 }));
      const c = await newCase({ org, grossOere: 5_000, customer: { email: 'a@b.example', externalReference: 'erp-7' } });
      // 20 days overdue with 5 000 øre: past the days threshold, under the amount: the advance announces nothing.
      const day = await toDaysAfterDue(c, 20);
      const balance = async () => (await call(t.app, 'GET', `/v1/customers/${c.customerId}/balance`, { key: org.apiKey })).body.data;
      assert.equal((await balance()).pastDue, false);
      assert.deepEqual(await events(org, 'customer.past_due'), []);

      const res = await remind(c);
      assert.deepEqual(res.body.data, { reminderNumber: 1, feeOere: 10_000, collectionsReady: false });
      assert.equal((await balance()).pastDue, true);
      const pastDue = await events(org, 'customer.past_due');
      assert.equal(pastDue.length, 1);
      assert.deepEqual(pastDue[0]!.customer, { id: c.customerId, sekvensnummer: 1 });
      assert.deepEqual(pastDue[0]!.data, {
        customerId: c.customerId, asOf: day, overdueOere: 15_000, overdueCount: 1, oldestDueDate: c.dueDate, daysOverdue: 20, externalReference: 'erp-7',
      });
      // Written by the same transaction as the reminder row.
      const [ev] = await sql()<{ xmin: string }[]>`SELECT xmin::text AS xmin FROM events WHERE id = ${pastDue[0]!.id}`;
      const [row] = await dbReminders(c);
      assert.equal(ev!.xmin, row!.xmin);

      // Once: a free reminder, the organisation's past-due look, a later fee-bearing reminder and a clock advance repeat
      // nothing.
      assert.equal((await remind(c)).body.data.feeOere, 0);
      await announcePastDue(testDb().db, testClock(), org.organizationId);
      await advance(org, 10);
      assert.equal((await remind(c)).body.data.feeOere, 10_000);
      await announcePastDue(testDb().db, testClock(), org.organizationId);
      assert.equal((await events(org, 'customer.past_due')).length, 1);
      assert.deepEqual((await events(org)).filter((e) => e.type.startsWith('customer.')).map((e) => e.type), ['customer.past_due']);
    });
  });
});
