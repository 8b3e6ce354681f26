import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { call, createTestOrg, startTestApp, type TestApp, type TestOrg } from '../helpers/context.ts';
import { ROOT } from '../helpers/scripts.ts';

/**
 * The README's first steps as an integrator copies them: the customer and the invoice bodies are read from the
 * README itself and sent to the real app, so a change to a contract that breaks the walkthrough fails here, and the
 * amounts the README prints are the ones the service computes.
 */
describe("the README's first customer and first invoice", () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  let t: TestApp;
  let org: TestOrg;

  /** The `curl -X POST` to `path` in the README: its URL, its `-d '…'` body (`'"$NAME"'` splices filled in), its answer. */
  const example = (path: string, vars: Record<string, string> = {}): { url: string; body: unknown; answer: string } => {
    const escaped = path.replace(/[.?]/g, '\\$&');
    const found = new RegExp(`curl -s -X POST "?http://127\\.0\\.0\\.1:3000(${escaped}(?:\\?[^\\s"]*)?)"? ([\\s\\S]*?)\\n\`\`\``).exec(readme);
    assert.ok(found, `README has no POST to ${path}`);
    const [, url, rest] = found as unknown as [string, string, string];
    const quoted = /-d '([\s\S]*?)'\n/.exec(rest)![1]!.replace(/'"\$([A-Z]+)"'/g, (_, name: string) => vars[name]!);
    const answer = rest.split('\n').filter((l) => l.startsWith('#')).join('\n');
    return { url, body: JSON.parse(quoted), answer };
  };

  before(async () => {
    t = await startTestApp();
    org = await createTestOrg({ name: 'Bager Hansen ApS' });
  });
  after(() => t.close());

  it('creates the customer and issues the invoice with the amounts the README shows @cluster', async () => {
    const customer = example('/v1/customers');
    const created = await call(t.app, 'POST', customer.url, { key: org.apiKey, body: customer.body });
    assert.equal(created.status, 201, created.raw);
    assert.equal(created.body.data.externalReference, 'crm-4711');

    const invoice = example('/v1/invoices', { CUSTOMER: created.body.data.id });
    assert.match(invoice.url, /^\/v1\/invoices\?send=true$/);
    const issued = await call(t.app, 'POST', invoice.url, { key: org.apiKey, body: invoice.body });
    assert.equal(issued.status, 201, issued.raw);
    const inv = issued.body.data;
    assert.equal(inv.status, 'issued');
    for (const line of inv.lines) {
      assert.ok(
        invoice.answer.includes(`"netOere":${line.netOere},"vatOere":${line.vatOere}`),
        `the README's answer shows line ${line.description} as netOere ${line.netOere}, vatOere ${line.vatOere}`,
      );
    }
    assert.ok(
      invoice.answer.includes(`"netOere":${inv.netOere},"vatOere":${inv.vatOere},"grossOere":${inv.grossOere},"balanceOere":${inv.balanceOere}`),
      `the README's answer shows the totals ${inv.netOere}/${inv.vatOere}/${inv.grossOere}`,
    );
  });

  it('refuses a discount given as a bare number, as the README says', async () => {
    const customer = await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: { type: 'company', name: 'Kunde A/S' } });
    const { body } = example('/v1/invoices', { CUSTOMER: customer.body.data.id });
    const lines = (body as { lines: Record<string, unknown>[] }).lines;
    const bare = { ...(body as object), lines: [{ ...lines[0], discount: 10 }] };
    const res = await call(t.app, 'POST', '/v1/invoices', { key: org.apiKey, body: bare });
    assert.equal(res.status, 400, res.raw);
    assert.equal(res.body.error.code, 'validation_failed');
    assert.deepEqual(res.body.error.details.map((d: { path: string }) => d.path), ['/lines/0/discount']);
  });
});
