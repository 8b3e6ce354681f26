import assert from 'node:assert/strict';
import { call, createTestOrg, startTestApp, testDb, type TestApp, type TestOrg } from '../helpers/context.ts';

describe('cursor pagination', () => {
  let t: TestApp;
  let org: TestOrg;
  before(async () => {
    t = await startTestApp();
    org = await createTestOrg();
    // A few hundred rows, inserted through the API.
    for (let batch = 0; batch < 6; batch++) {
      await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: { type: 'person', name: `Seed ${batch * 50 + i}`, cvr: '22222222' } }),
        ),
      );
    }
  });
  after(() => t.close());

  it('walks every row exactly once while other rows are being inserted between pages @cluster', async () => {
    const existing = new Set(
      (await testDb().db.sql<{ id: string }[]>`SELECT id FROM customers WHERE organization_id = ${org.organizationId}`).map((r) => r.id),
    );
    assert.equal(existing.size, 300);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    let inserted = 0;
    do {
      const url: string = `/v1/customers?limit=23${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const [res] = await Promise.all([
        call(t.app, 'GET', url, { key: org.apiKey }),
        ...Array.from({ length: 4 }, () =>
          call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: { type: 'person', name: `During ${inserted++}` } }),
        ),
      ]);
      assert.equal(res.status, 200);
      assert.ok(res.body.data.length <= 23);
      seen.push(...res.body.data.map((c: { id: string }) => c.id));
      cursor = res.body.meta.nextCursor;
      pages++;
    } while (cursor);
    assert.equal(new Set(seen).size, seen.length, 'no row repeated');
    for (const id of existing) assert.ok(seen.includes(id), `row ${id} skipped`);
    const sorted = [...seen].sort().reverse();
    assert.deepEqual(seen, sorted, 'newest first, in one consistent order');
    assert.ok(pages >= 14);
  });

  it('keeps filters across pages and ends with nextCursor null', async () => {
    const first = await call(t.app, 'GET', '/v1/customers?cvr=22222222&limit=200', { key: org.apiKey });
    assert.equal(first.body.data.length, 200);
    const second = await call(t.app, 'GET', `/v1/customers?cvr=22222222&limit=200&cursor=${first.body.meta.nextCursor}`, { key: org.apiKey });
    assert.equal(second.body.data.length, 100);
    assert.equal(second.body.meta.nextCursor, null);
  });

  it('400 invalid_cursor for a tampered, made-up, foreign-organisation or other-filter cursor', async () => {
    const page = await call(t.app, 'GET', '/v1/customers?limit=2', { key: org.apiKey });
    const cursor: string = page.body.meta.nextCursor;
    assert.match(cursor, /^[A-Za-z0-9_-]+$/, 'a cursor is base64url');
    const raw = Buffer.from(cursor, 'base64url');
    const mac = raw.subarray(0, 16);
    const forgedPosition = Buffer.from(JSON.stringify(['00000000-0000-7000-8000-000000000000']));
    const flipped = Buffer.from(raw);
    flipped[3] = flipped[3]! ^ 0x01;
    const other = await createTestOrg();
    const attempts: [string, string][] = [
      ['tampered position', Buffer.concat([mac, forgedPosition]).toString('base64url')],
      ['tampered mac', flipped.toString('base64url')],
      ['another spelling', `${cursor}=`],
      ['made up', 'bm90LWEtY3Vyc29y'],
      ['offset-like', '50'],
      ['empty', ''],
      ['overlong', `${cursor}${'A'.repeat(4000)}`],
    ];
    for (const [what, c] of attempts) {
      const res = await call(t.app, 'GET', `/v1/customers?limit=2&cursor=${encodeURIComponent(c)}`, { key: org.apiKey });
      assert.equal(res.status, 400, what);
      assert.equal(res.body.error.code, 'invalid_cursor', what);
    }
    const foreign = await call(t.app, 'GET', `/v1/customers?limit=2&cursor=${cursor}`, { key: other.apiKey });
    assert.equal(foreign.status, 400);
    assert.equal(foreign.body.error.code, 'invalid_cursor');
    const otherFilter = await call(t.app, 'GET', `/v1/customers?limit=2&cvr=22222222&cursor=${cursor}`, { key: org.apiKey });
    assert.equal(otherFilter.status, 400);
    assert.equal(otherFilter.body.error.code, 'invalid_cursor');
    const c = page.body.data[0].id;
    const otherList = await call(t.app, 'GET', `/v1/customers/${c}/departments?cursor=${cursor}`, { key: org.apiKey });
    assert.equal(otherList.status, 400);
    assert.equal(otherList.body.error.code, 'invalid_cursor');
  });
});
