import assert from 'node:assert/strict';
import { uuidv7 } from '../../services/shared/ids.ts';
import { call, createTestKey, createTestOrg, startTestApp, testDb, type TestApp } from '../helpers/context.ts';
import { runScript, type Run } from '../helpers/scripts.ts';

/**
 * Nationalbanken's reference rates (docs/reminders.md, "Interest"): the seeded half-years, GET /v1/reference-rates
 * newest first with the statutory rate, and the operator command that adds or replaces a half-year's rate and refuses
 * to replace one interest has been charged at.
 */
describe('reference rates', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  // The half-years these tests add (2090 on) stay for the rest of the run: fees are never removed, and the rate a fee
  // was charged at stays with it. No other test reaches those years.
  after(() => t.close());

  const admin = (args: string[]): Promise<Run> => {
    const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: process.env.TEST_DATABASE_URL };
    return runScript('services/admin/cli.ts', ['set-reference-rate', ...args], env);
  };
  const json = (r: Run) => {
    assert.equal(r.code, 0, `exit ${r.code}: ${r.stderr}`);
    return JSON.parse(r.stdout) as Record<string, unknown>;
  };
  const SEEDED = [
    ['2026-01-01', 175], ['2025-07-01', 175], ['2025-01-01', 275], ['2024-07-01', 350],
    ['2024-01-01', 375], ['2023-07-01', 325], ['2023-01-01', 190],
  ] as const;

  it('lists the seeded half-years newest first, each with its statutory rate (reference + 800 bp) @cluster', async () => {
    const org = await createTestOrg();
    const res = await call(t.app, 'GET', '/v1/reference-rates', { key: org.apiKey });
    assert.equal(res.status, 200, res.raw);
    const seeded = res.body.data.filter((r: { from: string }) => r.from < '2090-01-01');
    assert.deepEqual(seeded, SEEDED.map(([from, bp]) => ({ from, referenceRateBp: bp, statutoryRateBp: bp + 800 })));
    assert.deepEqual(res.body.meta, { nextCursor: null });
  });

  it('pages with limit and cursor; needs reminders:read; refuses unknown parameters', async () => {
    const org = await createTestOrg();
    const first = await call(t.app, 'GET', '/v1/reference-rates?limit=2', { key: org.apiKey });
    assert.equal(first.body.data.length, 2);
    const second = await call(t.app, 'GET', `/v1/reference-rates?limit=2&cursor=${encodeURIComponent(first.body.meta.nextCursor)}`, { key: org.apiKey });
    assert.equal(second.status, 200, second.raw);
    assert.ok(second.body.data[0].from < first.body.data[1].from);
    const other = await createTestOrg();
    const foreign = await call(t.app, 'GET', `/v1/reference-rates?limit=2&cursor=${encodeURIComponent(first.body.meta.nextCursor)}`, { key: other.apiKey });
    assert.equal(foreign.status, 400);
    assert.equal(foreign.body.error.code, 'invalid_cursor');
    assert.equal((await call(t.app, 'GET', '/v1/reference-rates', { key: await createTestKey(org, ['invoices:read']) })).status, 403);
    assert.equal((await call(t.app, 'GET', '/v1/reference-rates', { key: await createTestKey(org, ['reminders:read']) })).status, 200);
    const unknown = await call(t.app, 'GET', '/v1/reference-rates?year=2025', { key: org.apiKey });
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.error.code, 'validation_failed');
  });

  it('the operator adds a half-year, replaces it, and is told when nothing changed', async () => {
    assert.deepEqual(json(await admin(['--from', '2090-01-01', '--rate', '1.6', '--json'])), {
      from: '2090-01-01', referenceRateBp: 160, statutoryRateBp: 960, outcome: 'created', previousReferenceRateBp: null,
    });
    assert.deepEqual(json(await admin(['--from', '2090-01-01', '--rate', '2.05', '--json'])), {
      from: '2090-01-01', referenceRateBp: 205, statutoryRateBp: 1005, outcome: 'replaced', previousReferenceRateBp: 160,
    });
    assert.equal(json(await admin(['--from', '2090-01-01', '--rate', '2.05', '--json'])).outcome, 'unchanged');
    const text = await admin(['--from', '2090-07-01', '--rate', '0']);
    assert.equal(text.code, 0, text.stderr);
    assert.equal(text.stdout, 'Reference rate from 2090-07-01: 0.00 % (statutory interest 8.00 %), added.\n');
    const org = await createTestOrg();
    const res = await call(t.app, 'GET', '/v1/reference-rates?limit=2', { key: org.apiKey });
    assert.deepEqual(res.body.data, [
      { from: '2090-07-01', referenceRateBp: 0, statutoryRateBp: 800 },
      { from: '2090-01-01', referenceRateBp: 205, statutoryRateBp: 1005 },
    ]);
  });

  it('refuses to replace a rate interest has been posted at (exit 1), and leaves it as it was', async () => {
    json(await admin(['--from', '2091-01-01', '--rate', '3.00', '--json']));
    const org = await createTestOrg();
    const inv = await call(t.app, 'POST', '/v1/invoices?issue=true', { key: org.apiKey, body: { customer: { type: 'company', name: 'Kunde A/S' }, lines: [{ description: 'Brød', quantity: 1, unitPriceOere: 10_000 }] } });
    assert.equal(inv.status, 201, inv.raw);
    await testDb().db.sql`
      INSERT INTO invoice_fees (id, organization_id, invoice_id, customer_id, kind, amount_oere, interest_from, interest_to, rate_bp, rate_from)
      VALUES (${uuidv7()}, ${org.organizationId}, ${inv.body.data.id}, ${inv.body.data.customerId}, 'interest', 93, '2091-01-02', '2091-01-31', 1100, '2091-01-01')`;
    const refused = await admin(['--from', '2091-01-01', '--rate', '3.25']);
    assert.equal(refused.code, 1);
    assert.equal(refused.stdout, '');
    assert.match(refused.stderr, /^error: The reference rate from 2091-01-01 \(3\.00 %\) has been charged with in 1 interest posting\(s\); it cannot be replaced\./);
    const [row] = await testDb().db.sql`SELECT reference_rate_bp FROM reference_rates WHERE from_date = '2091-01-01'`;
    assert.equal(row!.reference_rate_bp, 300);
    assert.equal(json(await admin(['--from', '2091-01-01', '--rate', '3', '--json'])).outcome, 'unchanged');
  });

  const bad: [string, string[], RegExp][] = [
    ['a --from that is not 1 January or 1 July', ['--from', '2090-03-01', '--rate', '1.00'], /^error: --from must be 1 January or 1 July/],
    ['a --from that is no date', ['--from', 'soon', '--rate', '1.00'], /^error: --from must be 1 January or 1 July/],
    ['a --rate above 20.00', ['--from', '2090-01-01', '--rate', '20.01'], /^error: --rate must be a percentage from 0.00 to 20.00/],
    ['a --rate with three decimals', ['--from', '2090-01-01', '--rate', '1.605'], /^error: --rate must be a percentage/],
    ['a negative --rate', ['--from', '2090-01-01', '--rate', '-1'], /^error: --rate (must be a percentage|needs a value)/],
    ['no --rate', ['--from', '2090-01-01'], /^error: --rate is required/],
  ];
  for (const [what, args, message] of bad) {
    it(`refuses ${what} with exit 2`, async () => {
      const r = await admin(args);
      assert.equal(r.code, 2, `exit ${r.code}: ${r.stderr}`);
      assert.match(r.stderr.split('\n')[0]!, message);
    });
  }
});
