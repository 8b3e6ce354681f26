import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import { freePort } from '../../deploy/local/ports.ts';
import { buildPayApp } from '../../services/pay/app.ts';
import { createTestProvider } from '../../services/payments/providers/test-provider.ts';
import { realClock } from '../../services/shared/clock.ts';
import { createSql, Db } from '../../services/shared/db.ts';
import { startTestPay, type TestPay } from '../helpers/pay.ts';

/**
 * The pay service's probes as a container orchestrator calls them (deploy/kubernetes/pay.yaml): /healthz while the
 * process answers, /readyz only while PostgreSQL answers too, the answer shaped as the API's /readyz.
 */
describe('pay service health and readiness', () => {
  let pay: TestPay;
  before(async () => {
    pay = await startTestPay();
  });
  after(async () => {
    await pay?.close();
  });

  it('answers /healthz and /readyz with 200 while the database answers @cluster', async () => {
    const live = await pay.app.inject({ method: 'GET', url: '/healthz' });
    assert.equal(live.statusCode, 200);
    assert.deepEqual(live.json(), { status: 'ok' });
    const ready = await pay.app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(ready.statusCode, 200);
    assert.deepEqual(ready.json(), { status: 'ready', checks: { postgres: 'ok' } });
  });

  /** A pay app on a database at `url`: the process is up, its PostgreSQL is not. */
  async function payOn(url: string) {
    const db = new Db(createSql(url, { max: 1 }), 1);
    const provider = createTestProvider({ secret: Buffer.alloc(32, 9), baseUrl: 'http://pay.test/test-provider' });
    const app = await buildPayApp({ db, clock: realClock, provider: provider.provider, payBaseUrl: 'http://pay.test', logLevel: 'silent' });
    return {
      app,
      async close() {
        provider.close();
        await app.close();
        await db.sql.end({ timeout: 1 });
      },
    };
  }

  it('answers /readyz with 503 not_ready, and /healthz still with 200, when nothing listens at the database address', async () => {
    const down = await payOn(`postgres://postgres@127.0.0.1:${await freePort()}/postgres`);
    try {
      const ready = await down.app.inject({ method: 'GET', url: '/readyz' });
      assert.equal(ready.statusCode, 503);
      assert.deepEqual(ready.json(), { status: 'not_ready', checks: { postgres: 'unavailable' } });
      assert.equal((await down.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
    } finally {
      await down.close();
    }
  });

  it('answers /readyz with 503 when the database accepts the connection but never answers (the probe does not hang)', async () => {
    const sockets = new Set<Socket>();
    const silent: Server = createServer((s) => void sockets.add(s));
    const port = await freePort();
    await new Promise<void>((r) => silent.listen(port, '127.0.0.1', r));
    const hung = await payOn(`postgres://postgres@127.0.0.1:${port}/postgres`);
    try {
      const ready = await hung.app.inject({ method: 'GET', url: '/readyz' });
      assert.equal(ready.statusCode, 503);
      assert.deepEqual(ready.json(), { status: 'not_ready', checks: { postgres: 'unavailable' } });
    } finally {
      // The pool first (its end() gives up on the silent connection), then whatever the server still holds.
      await hung.close();
      const closed = new Promise<void>((r) => silent.close(() => r()));
      for (const s of sockets) s.destroy();
      await closed;
    }
  });
});
