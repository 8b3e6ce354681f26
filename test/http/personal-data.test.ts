import assert from 'node:assert/strict';
import { call, createTestOrg, startTestApp, testDb, type TestApp, type TestOrg } from '../helpers/context.ts';

/**
 * E-mail addresses and phone numbers are encrypted at rest and never logged (docs/api-conventions.md, "Requests",
 * Logs).
 */
describe('personal data at rest and in logs', () => {
  let t: TestApp;
  let org: TestOrg;
  const email = `pii.${Date.now()}@privat-person.dk`;
  const phone = `+45 ${String(Date.now()).slice(-8)}`;
  const depEmail = `dept.${Date.now()}@privat-person.dk`;

  before(async () => {
    t = await startTestApp({}, { logLevel: 'debug' });
    org = await createTestOrg();
    const c = await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: { type: 'person', name: 'Privat', email, phone } });
    assert.equal(c.status, 201);
    await call(t.app, 'PATCH', `/v1/customers/${c.body.data.id}`, { key: org.apiKey, body: { phone } });
    await call(t.app, 'POST', `/v1/customers/${c.body.data.id}/departments`, { key: org.apiKey, body: { name: 'D', email: depEmail } });
    const found = await call(t.app, 'GET', `/v1/customers?email=${encodeURIComponent(email)}`, { key: org.apiKey });
    assert.equal(found.body.data.length, 1);
    assert.equal(found.body.data[0].email, email);
    assert.equal(found.body.data[0].phone, phone);
    await call(t.app, 'GET', `/v1/customers?email=${encodeURIComponent(email)}&limit=500`, { key: org.apiKey }); // a 400 is logged too
  });
  after(() => t.close());

  it('no table holds the e-mail or phone in clear text (stored responses included) @cluster', async () => {
    const { sql } = testDb().db;
    const columns = await sql<{ table_name: string; column_name: string }[]>`
      SELECT table_name, column_name FROM information_schema.columns
      WHERE table_schema = 'public' AND data_type IN ('text', 'jsonb', 'bytea', 'character varying')`;
    assert.ok(columns.length > 10);
    for (const needle of [email, phone, depEmail]) {
      for (const { table_name, column_name } of columns) {
        const rows = await sql.unsafe(
          `SELECT 1 FROM "${table_name}" WHERE position($1 in convert_from(convert_to("${column_name}"::text, 'UTF8'), 'UTF8')) > 0
             OR position(convert_to($1, 'UTF8') in CASE WHEN pg_typeof("${column_name}")::text = 'bytea' THEN "${column_name}"::text::bytea ELSE convert_to("${column_name}"::text, 'UTF8') END) > 0 LIMIT 1`,
          [needle],
        );
        assert.equal(rows.length, 0, `${needle} found in ${table_name}.${column_name}`);
      }
    }
    const [row] = await sql<{ email_enc: Buffer }[]>`SELECT email_enc FROM customers WHERE organization_id = ${org.organizationId}`;
    assert.ok(row!.email_enc.length > email.length, 'ciphertext present');
  });

  it('logs carry neither the e-mail nor the phone, not even from a query string @cluster', () => {
    const logs = t.logs();
    assert.ok(logs.length > 0);
    assert.match(logs, /email=\[redacted\]/);
    for (const needle of [email, encodeURIComponent(email), phone, encodeURIComponent(phone), depEmail]) {
      assert.ok(!logs.includes(needle), `log contains ${needle}`);
    }
  });
});
