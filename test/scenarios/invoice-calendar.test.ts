import assert from 'node:assert/strict';
import { call } from '../helpers/context.ts';
import { startScenario, type Scenario } from '../helpers/scenario.ts';
import { eventually, Receiver } from '../helpers/webhooks.ts';

/**
 * An invoice's life on a sandbox clock, through the public API and the real engine: issued and mailed, its
 * webhook's failed attempts retried as the clock moves past each retry, paid on day 20 with a receipt. The
 * shape every coming calendar story (reminders, collection, subscription periods) takes.
 */
describe('scenario: an invoice walked through its calendar', function () {
  this.timeout(90_000);
  let s: Scenario;
  const receiver = new Receiver();

  before(async () => {
    s = await startScenario();
    await receiver.start();
  });
  after(async () => {
    await receiver.stop();
    await s?.close();
  });

  it('issue and mail on day 0, a failing webhook retried on days 1 and 2 by the clock, payment in full on day 20 with its receipt', async () => {
    let calls = 0;
    receiver.status = () => (++calls <= 2 ? 503 : 204);
    const endpoint = await call(s.api.app, 'POST', '/v1/webhook-endpoints', {
      key: s.org.apiKey,
      body: { url: receiver.url, eventTypes: ['invoice.issued'] },
    });
    assert.equal(endpoint.status, 201, endpoint.raw);

    const day0 = await s.today();
    const inv = await s.issue({ paymentTermsDays: 14, send: true });
    assert.equal(inv.status, 'issued');
    assert.equal(inv.grossOere, 125_000);
    const timeline = await call(s.api.app, 'GET', `/v1/invoices/${inv.id}/timeline`, { key: s.org.apiKey });
    assert.deepEqual(
      timeline.body.data.map((t: { code: string }) => t.code).filter((c: string) => c !== 'delivered'),
      ['created', 'issued', 'sent'],
    );

    // The first attempt fails; the retry after it waits 5 s of business time, the one after that 5 minutes. Only the
    // clock's advances can bring the third attempt within this test's seconds.
    await eventually('the first attempt', async () => (receiver.received.length >= 1 ? true : undefined));
    assert.equal(receiver.received.length, 1);
    const { today } = await s.advance(1);
    assert.notEqual(today, day0);
    await eventually('the second attempt', async () => (receiver.received.length >= 2 ? true : undefined));
    await s.settle();
    assert.equal(receiver.received.length, 2, 'the third attempt waits for its five minutes');
    await s.advance(1);
    await eventually('the third attempt', async () => (receiver.received.length >= 3 ? true : undefined));
    assert.equal(receiver.received.length, 3);
    assert.equal(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size, 1);

    await s.advance(18);
    const paid = await s.pay(inv.id, inv.grossOere);
    assert.deepEqual([paid.body.data.status, paid.body.data.balanceOere, paid.body.meta.outcome], ['paid', 0, 'paid_in_full']);
    assert.equal(paid.body.data.dueDate < (await s.today()), true, 'paid after its due date');
    const receipt = await s.api.app.inject({
      method: 'GET',
      url: `/v1/payments/${paid.body.meta.paymentId}/receipt`,
      headers: { authorization: `Bearer ${s.org.apiKey}` },
    });
    assert.equal(receipt.statusCode, 200);
    assert.equal(receipt.headers['content-type'], 'application/pdf');

    assert.deepEqual(await s.eventTypes(), ['invoice.issued', 'invoice.sent', 'payment.received', 'invoice.paid']);
  });
});
