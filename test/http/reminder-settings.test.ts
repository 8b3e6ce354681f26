import assert from 'node:assert/strict';
import { inProcessOnly, call, createTestKey, createTestOrg, newIdempotencyKey, startTestApp, testDb, type ApiResponse, type TestApp, type TestOrg } from '../helpers/context.ts';
import { DEFAULT_REMINDER_SETTINGS, loadReminderSettings, type ReminderSettings } from '../../services/reminders/reminder-settings.ts';

interface DbSettings {
  max_reminders: number;
  fee_oere: number | null;
  cadence_days: number[];
  auto_collections: boolean;
  payment_reminder_enabled: boolean;
  payment_reminder_days: number;
  letter_fallback: boolean;
  late_interest: string;
  compensation: boolean;
  updated_at: Date;
}

async function dbSettings(organizationId: string): Promise<DbSettings | undefined> {
  const { db } = testDb();
  const [row] = await db.sql<DbSettings[]>`
    SELECT max_reminders, fee_oere, cadence_days, auto_collections, payment_reminder_enabled, payment_reminder_days,
           letter_fallback, late_interest, compensation, updated_at
    FROM reminder_settings WHERE organization_id = ${organizationId}`;
  return row;
}

function assertError(res: ApiResponse, status: number, code: string, details?: { path: string; message: string }[]): void {
  assert.equal(res.status, status, res.raw);
  const error: Record<string, unknown> = { code, message: res.body.error.message, requestId: res.headers['request-id'] };
  if (details) error.details = details;
  assert.deepEqual(res.body, { error });
  const message: unknown = res.body.error.message;
  assert.ok(typeof message === 'string' && message.length > 0, 'the error message is a non-empty sentence');
}

const DEFAULTS = {
  maxReminders: 3,
  feeOere: null,
  effectiveFeeOere: 10000,
  cadence: [
    { reminderNumber: 1, daysAfterDue: 7 },
    { reminderNumber: 2, daysAfterDue: 14 },
    { reminderNumber: 3, daysAfterDue: 21 },
  ],
  autoCollections: false,
  paymentReminderEnabled: false,
  paymentReminderDays: 3,
  letterFallback: false,
  lateInterest: 'none',
  compensation: false,
};
/** The defaults as a PUT body: the nine fields. */
const { effectiveFeeOere: _effective, ...defaultsBody } = DEFAULTS;

/** A valid body that differs from the defaults in every field. */
const custom = {
  maxReminders: 2,
  feeOere: 7000,
  cadence: [
    { reminderNumber: 1, daysAfterDue: 10 },
    { reminderNumber: 2, daysAfterDue: 20 },
    { reminderNumber: 3, daysAfterDue: 45 },
  ],
  autoCollections: true,
  paymentReminderEnabled: true,
  paymentReminderDays: 5,
  letterFallback: true,
  lateInterest: 'statutory',
  compensation: true,
};

const cadence = (...days: number[]) => days.map((daysAfterDue, i) => ({ reminderNumber: i + 1, daysAfterDue }));

describe('Reminder settings', () => {
  let t: TestApp;
  let org: TestOrg;
  const changed: string[] = [];
  /** What the hook's organisation's settings were when it ran, read on another connection: only committed data. */
  const seenByHook = new Map<string, ReminderSettings>();

  before(async () => {
    t = await startTestApp(inProcessOnly({
      onReminderSettingsChanged: async (organizationId) => {
        seenByHook.set(organizationId, await testDb().db.read((sql) => loadReminderSettings(sql, organizationId)));
        changed.push(organizationId);
      },
    }));
    org = await createTestOrg();
  });
  after(() => t.close());

  const get = (o: TestOrg = org, key = o.apiKey) => call(t.app, 'GET', '/v1/reminder-settings', { key });
  const put = (body: unknown, o: TestOrg = org, opts: { key?: string; idempotencyKey?: string } = {}) =>
    call(t.app, 'PUT', '/v1/reminder-settings', { key: opts.key ?? o.apiKey, body, ...(opts.idempotencyKey ? { idempotencyKey: opts.idempotencyKey } : {}) });

  describe('GET /v1/reminder-settings', () => {
    it('answers the defaults for an organisation that has set none, without writing a row', async () => {
      const fresh = await createTestOrg();
      const res = await get(fresh);
      assert.equal(res.status, 200, res.raw);
      assert.deepEqual(res.body, { data: DEFAULTS, meta: {} });
      assert.equal(await dbSettings(fresh.organizationId), undefined);
    });

    it('loadReminderSettings gives the defaults as a fresh copy', async () => {
      const fresh = await createTestOrg();
      const loaded = await testDb().db.read((sql) => loadReminderSettings(sql, fresh.organizationId));
      assert.deepEqual(loaded, defaultsBody);
      assert.deepEqual(DEFAULT_REMINDER_SETTINGS, defaultsBody);
      loaded.cadence[0]!.daysAfterDue = 99;
      assert.equal(DEFAULT_REMINDER_SETTINGS.cadence[0]!.daysAfterDue, 7);
    });

    it('needs reminders:read: 403 insufficient_scope', async () => {
      const key = await createTestKey(org, ['reminders:write']);
      assertError(await get(org, key), 403, 'insufficient_scope', [{ path: '', message: 'required scope: reminders:read' }]);
    });

    it('refuses an unknown query parameter: 400 validation_failed', async () => {
      const res = await call(t.app, 'GET', '/v1/reminder-settings?x=1', { key: org.apiKey });
      assert.equal(res.status, 400, res.raw);
      assert.equal(res.body.error.code, 'validation_failed');
    });
  });

  describe('PUT /v1/reminder-settings', () => {
    it('replaces the settings: 200 with the body of GET, GET agrees, and the row holds them', async () => {
      const o = await createTestOrg();
      changed.length = 0;
      const res = await put(custom, o);
      assert.equal(res.status, 200, res.raw);
      const expected = { ...custom, effectiveFeeOere: 7000 };
      assert.deepEqual(res.body, { data: expected, meta: {} });
      assert.deepEqual((await get(o)).body, { data: expected, meta: {} });
      const row = await dbSettings(o.organizationId);
      assert.ok(row);
      assert.deepEqual({ ...row, updated_at: undefined }, {
        max_reminders: 2,
        fee_oere: 7000,
        cadence_days: [10, 20, 45],
        auto_collections: true,
        payment_reminder_enabled: true,
        payment_reminder_days: 5,
        letter_fallback: true,
        late_interest: 'statutory',
        compensation: true,
        updated_at: undefined,
      });
      assert.ok(row.updated_at instanceof Date);
      assert.deepEqual(changed, [o.organizationId], 'the after-commit hook ran once, for this organisation');
      assert.deepEqual(seenByHook.get(o.organizationId), custom, 'the hook runs after commit: the new settings are readable');
    });

    it('is a full replacement: a second PUT overwrites every field (feeOere null means the statutory cap) @cluster', async () => {
      const o = await createTestOrg();
      assert.equal((await put(custom, o)).status, 200);
      const first = await dbSettings(o.organizationId);
      const second = { ...defaultsBody, maxReminders: 0, cadence: cadence(1, 2, 365) };
      const res = await put(second, o);
      assert.equal(res.status, 200, res.raw);
      const expected = { ...DEFAULTS, maxReminders: 0, cadence: cadence(1, 2, 365) };
      assert.deepEqual(res.body, { data: expected, meta: {} });
      assert.deepEqual((await get(o)).body, { data: expected, meta: {} });
      const row = await dbSettings(o.organizationId);
      assert.equal(row!.fee_oere, null);
      assert.deepEqual(row!.cadence_days, [1, 2, 365]);
      assert.equal(row!.payment_reminder_enabled, false);
      assert.ok(row!.updated_at >= first!.updated_at);
    });

    it('takes the bounds themselves: feeOere 0 and 10000, maxReminders 0 and 3, days 1 and 365', async () => {
      const o = await createTestOrg();
      for (const body of [
        { ...custom, feeOere: 0, maxReminders: 0, paymentReminderEnabled: false, paymentReminderDays: 365 },
        { ...custom, feeOere: 10000, maxReminders: 3, cadence: cadence(2, 3, 4), paymentReminderDays: 1 },
      ]) {
        const res = await put(body, o);
        assert.equal(res.status, 200, res.raw);
        assert.deepEqual(res.body.data, { ...body, effectiveFeeOere: body.feeOere });
      }
    });

    it('a body of the seven plan fields alone is valid and switches interest and compensation off', async () => {
      const o = await createTestOrg();
      assert.equal((await put(custom, o)).status, 200);
      const { lateInterest: _l, compensation: _c, ...seven } = custom;
      const res = await put(seven, o);
      assert.equal(res.status, 200, res.raw);
      assert.deepEqual([res.body.data.lateInterest, res.body.data.compensation], ['none', false]);
      const row = await dbSettings(o.organizationId);
      assert.deepEqual([row!.late_interest, row!.compensation], ['none', false]);
    });

    it('keeps organisations apart: one organisation’s PUT changes nothing for another', async () => {
      const a = await createTestOrg();
      const b = await createTestOrg();
      assert.equal((await put({ ...custom, feeOere: 5000 }, b)).status, 200);
      const before = await dbSettings(b.organizationId);
      assert.equal((await put(custom, a)).status, 200);
      assert.deepEqual(await dbSettings(b.organizationId), before);
      assert.deepEqual((await get(b)).body.data, { ...custom, feeOere: 5000, effectiveFeeOere: 5000 });
      const c = await createTestOrg();
      assert.deepEqual((await get(c)).body.data, DEFAULTS);
      assert.equal(await dbSettings(c.organizationId), undefined);
    });

    it('needs reminders:write: 403 insufficient_scope, nothing written', async () => {
      const o = await createTestOrg();
      const key = await createTestKey(o, ['reminders:read']);
      assertError(await put(custom, o, { key }), 403, 'insufficient_scope', [{ path: '', message: 'required scope: reminders:write' }]);
      assert.equal(await dbSettings(o.organizationId), undefined);
    });

    it('needs an Idempotency-Key', async () => {
      const res = await call(t.app, 'PUT', '/v1/reminder-settings', { key: org.apiKey, body: custom, idempotencyKey: null });
      assertError(res, 400, 'idempotency_key_missing');
    });

    it('replays the same request with the same key, once applied; another body with it is 409', async () => {
      const o = await createTestOrg();
      const idempotencyKey = newIdempotencyKey();
      changed.length = 0;
      const first = await put(custom, o, { idempotencyKey });
      assert.equal(first.status, 200, first.raw);
      const stored = await dbSettings(o.organizationId);
      // Another write in between: the replay answers the first response and writes nothing.
      assert.equal((await put({ ...custom, feeOere: 100 }, o)).status, 200);
      const between = await dbSettings(o.organizationId);
      // Key order does not matter to the fingerprint.
      const reordered = Object.fromEntries(Object.entries(custom).reverse());
      const again = await put(reordered, o, { idempotencyKey });
      assert.equal(again.status, 200, again.raw);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.deepEqual(again.body, { data: first.body.data, meta: { replayed: true } });
      assert.deepEqual(await dbSettings(o.organizationId), between);
      assert.notDeepEqual(between, stored);
      assertError(await put({ ...custom, letterFallback: false }, o, { idempotencyKey }), 409, 'idempotency_conflict');
      assert.deepEqual(changed, [o.organizationId, o.organizationId], 'the hook runs after each applied PUT, never on a replay');
    });

    it('a 400 does not consume the key: the cadence rules are checked before it, like the schema', async () => {
      const o = await createTestOrg();
      const idempotencyKey = newIdempotencyKey();
      const bad = await put({ ...custom, cadence: cadence(10, 10, 45) }, o, { idempotencyKey });
      assert.equal(bad.status, 400, bad.raw);
      const good = await put(custom, o, { idempotencyKey });
      assert.equal(good.status, 200, good.raw);
      // A used key with a body that breaks a cadence rule is still a 400, not an idempotency conflict.
      const again = await put({ ...custom, cadence: cadence(10, 9, 45) }, o, { idempotencyKey });
      assertError(again, 400, 'validation_failed', [
        { path: '/cadence/1/daysAfterDue', message: "must be greater than the previous step's daysAfterDue (10)" },
      ]);
    });

    it('a hook that fails is logged; the settings are committed and answered', async () => {
      const failing = await startTestApp({ onReminderSettingsChanged: () => Promise.reject(new Error('engine unavailable')) });
      try {
        const o = await createTestOrg();
        const res = await call(failing.app, 'PUT', '/v1/reminder-settings', { key: o.apiKey, body: custom });
        assert.equal(res.status, 200, res.raw);
        assert.equal((await dbSettings(o.organizationId))!.fee_oere, 7000);
        assert.match(failing.logs(), /post-commit hand-off failed/);
      } finally {
        await failing.close();
      }
    });
  });

  describe('PUT /v1/reminder-settings: 400 validation_failed, one pointer per problem, nothing written', () => {
    const cases: [string, unknown, { path: string; message: string }[]][] = [
      ['a missing field', (({ letterFallback: _l, ...rest }) => rest)(custom), [{ path: '/letterFallback', message: 'is required' }]],
      ['every field missing', {}, [
        { path: '/maxReminders', message: 'is required' },
        { path: '/feeOere', message: 'is required' },
        { path: '/cadence', message: 'is required' },
        { path: '/autoCollections', message: 'is required' },
        { path: '/paymentReminderEnabled', message: 'is required' },
        { path: '/paymentReminderDays', message: 'is required' },
        { path: '/letterFallback', message: 'is required' },
      ]],
      ['lateInterest of another value', { ...custom, lateInterest: 'contractual' }, [{ path: '/lateInterest', message: 'must be one of: none, statutory' }]],
      ['compensation as text', { ...custom, compensation: 'yes' }, [{ path: '/compensation', message: 'must be boolean' }]],
      ['effectiveFeeOere (read-only)', { ...custom, effectiveFeeOere: 7000 }, [{ path: '/effectiveFeeOere', message: 'is not an allowed property' }]],
      ['an unknown field', { ...custom, interestBps: 800 }, [{ path: '/interestBps', message: 'is not an allowed property' }]],
      ['an unknown field in a cadence item', { ...custom, cadence: [{ ...custom.cadence[0], fee: 1 }, ...custom.cadence.slice(1)] },
        [{ path: '/cadence/0/fee', message: 'is not an allowed property' }]],
      ['maxReminders 4', { ...custom, maxReminders: 4 }, [{ path: '/maxReminders', message: 'must be <= 3' }]],
      ['maxReminders -1', { ...custom, maxReminders: -1 }, [{ path: '/maxReminders', message: 'must be >= 0' }]],
      ['maxReminders as text', { ...custom, maxReminders: '3' }, [{ path: '/maxReminders', message: 'must be integer' }]],
      ['maxReminders null', { ...custom, maxReminders: null }, [{ path: '/maxReminders', message: 'must be integer' }]],
      ['feeOere 10001', { ...custom, feeOere: 10001 }, [{ path: '/feeOere', message: 'must be <= 10000' }]],
      ['feeOere -1', { ...custom, feeOere: -1 }, [{ path: '/feeOere', message: 'must be >= 0' }]],
      ['feeOere 1.5', { ...custom, feeOere: 1.5 }, [{ path: '/feeOere', message: 'must be integer' }]],
      ['paymentReminderDays 0', { ...custom, paymentReminderDays: 0 }, [{ path: '/paymentReminderDays', message: 'must be >= 1' }]],
      ['paymentReminderDays 366', { ...custom, paymentReminderEnabled: false, paymentReminderDays: 366 },
        [{ path: '/paymentReminderDays', message: 'must be <= 365' }]],
      ['autoCollections as text', { ...custom, autoCollections: 'true' }, [{ path: '/autoCollections', message: 'must be boolean' }]],
      ['paymentReminderEnabled null', { ...custom, paymentReminderEnabled: null }, [{ path: '/paymentReminderEnabled', message: 'must be boolean' }]],
      ['letterFallback 1', { ...custom, letterFallback: 1 }, [{ path: '/letterFallback', message: 'must be boolean' }]],
      ['a cadence of two items', { ...custom, cadence: cadence(7, 14) }, [{ path: '/cadence', message: 'must NOT have fewer than 3 items' }]],
      ['a cadence of four items', { ...custom, cadence: [...cadence(7, 14, 21), { reminderNumber: 3, daysAfterDue: 28 }] },
        [{ path: '/cadence', message: 'must NOT have more than 3 items' }]],
      ['an empty cadence', { ...custom, cadence: [] }, [{ path: '/cadence', message: 'must NOT have fewer than 3 items' }]],
      ['a cadence that is not an array', { ...custom, cadence: { 1: 7 } }, [{ path: '/cadence', message: 'must be array' }]],
      ['a cadence item that is not an object', { ...custom, cadence: [7, ...custom.cadence.slice(1)] }, [{ path: '/cadence/0', message: 'must be object' }]],
      ['a cadence item without daysAfterDue', { ...custom, cadence: [{ reminderNumber: 1 }, ...custom.cadence.slice(1)] },
        [{ path: '/cadence/0/daysAfterDue', message: 'is required' }]],
      ['reminderNumber 4', { ...custom, cadence: [...cadence(7, 14), { reminderNumber: 4, daysAfterDue: 21 }] },
        [{ path: '/cadence/2/reminderNumber', message: 'must be <= 3' }]],
      ['reminderNumber 0', { ...custom, cadence: [{ reminderNumber: 0, daysAfterDue: 7 }, ...cadence(7, 14, 21).slice(1)] },
        [{ path: '/cadence/0/reminderNumber', message: 'must be >= 1' }]],
      ['daysAfterDue 0', { ...custom, cadence: cadence(0, 14, 21) }, [{ path: '/cadence/0/daysAfterDue', message: 'must be >= 1' }]],
      ['daysAfterDue 366', { ...custom, cadence: cadence(7, 14, 366) }, [{ path: '/cadence/2/daysAfterDue', message: 'must be <= 365' }]],
      ['daysAfterDue 7.5', { ...custom, cadence: cadence(7.5, 14, 21) }, [{ path: '/cadence/0/daysAfterDue', message: 'must be integer' }]],
      // The rules across items, checked after the schema.
      ['reminderNumbers out of order', {
        ...custom,
        cadence: [{ reminderNumber: 2, daysAfterDue: 10 }, { reminderNumber: 1, daysAfterDue: 20 }, { reminderNumber: 3, daysAfterDue: 45 }],
      }, [
        { path: '/cadence/0/reminderNumber', message: 'must be 1 (reminders 1, 2, 3 in that order)' },
        { path: '/cadence/1/reminderNumber', message: 'must be 2 (reminders 1, 2, 3 in that order)' },
      ]],
      ['a repeated reminderNumber', {
        ...custom,
        cadence: [{ reminderNumber: 1, daysAfterDue: 10 }, { reminderNumber: 2, daysAfterDue: 20 }, { reminderNumber: 2, daysAfterDue: 45 }],
      }, [{ path: '/cadence/2/reminderNumber', message: 'must be 3 (reminders 1, 2, 3 in that order)' }]],
      ['equal days', { ...custom, cadence: cadence(10, 10, 45) },
        [{ path: '/cadence/1/daysAfterDue', message: "must be greater than the previous step's daysAfterDue (10)" }]],
      ['decreasing days at the last step', { ...custom, cadence: cadence(10, 20, 15) },
        [{ path: '/cadence/2/daysAfterDue', message: "must be greater than the previous step's daysAfterDue (20)" }]],
      ['days all equal', { ...custom, cadence: cadence(21, 21, 21) }, [
        { path: '/cadence/1/daysAfterDue', message: "must be greater than the previous step's daysAfterDue (21)" },
        { path: '/cadence/2/daysAfterDue', message: "must be greater than the previous step's daysAfterDue (21)" },
      ]],
      ['numbers and days both wrong', {
        ...custom,
        cadence: [{ reminderNumber: 1, daysAfterDue: 30 }, { reminderNumber: 3, daysAfterDue: 20 }, { reminderNumber: 2, daysAfterDue: 45 }],
      }, [
        { path: '/cadence/1/reminderNumber', message: 'must be 2 (reminders 1, 2, 3 in that order)' },
        { path: '/cadence/1/daysAfterDue', message: "must be greater than the previous step's daysAfterDue (30)" },
        { path: '/cadence/2/reminderNumber', message: 'must be 3 (reminders 1, 2, 3 in that order)' },
      ]],
    ];

    for (const [what, body, details] of cases) {
      it(`refuses ${what}`, async () => {
        const o = await createTestOrg();
        assertError(await put(body, o), 400, 'validation_failed', details);
        assert.equal(await dbSettings(o.organizationId), undefined);
      });
    }

    it('names every problem of one body', async () => {
      const o = await createTestOrg();
      const res = await put({ ...custom, maxReminders: 9, feeOere: 20000, paymentReminderDays: 0, cadence: cadence(7, 14) }, o);
      assertError(res, 400, 'validation_failed', [
        { path: '/maxReminders', message: 'must be <= 3' },
        { path: '/feeOere', message: 'must be <= 10000' },
        { path: '/cadence', message: 'must NOT have fewer than 3 items' },
        { path: '/paymentReminderDays', message: 'must be >= 1' },
      ]);
    });

    it('refuses a body that is not an object, and no body', async () => {
      for (const res of [await put(null), await put([]), await call(t.app, 'PUT', '/v1/reminder-settings', { key: org.apiKey })]) {
        assert.equal(res.status, 400, res.raw);
        assert.equal(res.body.error.code, 'validation_failed');
      }
    });
  });

  describe('PUT /v1/reminder-settings: 422 invalid_reminder_settings', () => {
    it('refuses an enabled payment reminder on or after the first reminder, and remembers it under the key', async () => {
      const o = await createTestOrg();
      changed.length = 0;
      for (const days of [10, 11, 365]) {
        const idempotencyKey = newIdempotencyKey();
        const body = { ...custom, paymentReminderEnabled: true, paymentReminderDays: days };
        const res = await put(body, o, { idempotencyKey });
        assertError(res, 422, 'invalid_reminder_settings', [
          { path: '/paymentReminderDays', message: "must be less than the first cadence step's daysAfterDue (10) when paymentReminderEnabled is true" },
        ]);
        assert.equal(await dbSettings(o.organizationId), undefined);
        const replayed = await put(body, o, { idempotencyKey });
        assert.equal(replayed.status, 422);
        assert.equal(replayed.headers['idempotent-replayed'], 'true');
      }
      assert.deepEqual(changed, []);
    });

    it('takes a payment reminder the day before the first reminder, and any days while it is disabled', async () => {
      const o = await createTestOrg();
      const enabled = await put({ ...custom, paymentReminderEnabled: true, paymentReminderDays: 9 }, o);
      assert.equal(enabled.status, 200, enabled.raw);
      const disabled = await put({ ...custom, paymentReminderEnabled: false, paymentReminderDays: 100 }, o);
      assert.equal(disabled.status, 200, disabled.raw);
      assert.deepEqual(disabled.body.data, { ...custom, paymentReminderEnabled: false, paymentReminderDays: 100, effectiveFeeOere: 7000 });
    });

    it('a broken cadence is a 400 before the payment reminder is judged', async () => {
      const o = await createTestOrg();
      const res = await put({ ...custom, paymentReminderDays: 50, cadence: cadence(10, 5, 45) }, o);
      assertError(res, 400, 'validation_failed', [
        { path: '/cadence/1/daysAfterDue', message: "must be greater than the previous step's daysAfterDue (10)" },
      ]);
    });
  });
});
