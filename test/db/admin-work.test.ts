import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { WORK } from '../../contracts/workflows.ts';
import { parkWake, scheduleWake } from '../../services/clock/wake-index.ts';
import { createTestOrg, testDb } from '../helpers/context.ts';
import { runScript, type Run } from '../helpers/scripts.ts';

/** Parked durable work through the operator command: listed with its error, put back in line once. */
describe('operator command: parked work', function () {
  this.timeout(30_000);
  const env = () => {
    const e: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: process.env.TEST_DATABASE_URL! };
    return e;
  };
  const admin = (args: string[]): Promise<Run> => runScript('services/admin/cli.ts', args, env());
  const json = (r: Run) => {
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^[^\n]+\n$/);
    return JSON.parse(r.stdout) as Record<string, unknown>;
  };

  it('lists work whose retries ran out, and retry-work makes it due again exactly once', async () => {
    const org = await createTestOrg();
    const paymentKey = randomUUID();
    const target = WORK.paymentReceipt(paymentKey);
    const { db } = testDb();
    await db.tx(async (tx) => {
      await scheduleWake(tx, org.organizationId, target, new Date(Date.now() - 3_600_000));
      assert.equal(await parkWake(tx, target, 'renderer crashed'), true);
    });

    const listed = json(await admin(['parked-work', '--json'])).work as { service: string; key: string; handler: string; organizationId: string; lastError: string }[];
    const mine = listed.find((w) => w.key === paymentKey);
    assert.deepEqual(
      mine && { service: mine.service, handler: mine.handler, organizationId: mine.organizationId, lastError: mine.lastError },
      { service: 'PaymentReceipt', handler: 'render', organizationId: org.organizationId, lastError: 'renderer crashed' },
    );

    assert.deepEqual(json(await admin(['retry-work', '--service', 'PaymentReceipt', '--key', paymentKey, '--json'])), {
      service: 'PaymentReceipt',
      key: paymentKey,
      retried: true,
    });
    const [row] = await db.sql<{ parked_at: Date | null; last_error: string | null; due: boolean }[]>`
      SELECT parked_at, last_error, due_at <= now() AS due FROM wake_index WHERE service = 'PaymentReceipt' AND key = ${paymentKey}`;
    assert.deepEqual({ ...row }, { parked_at: null, last_error: null, due: true });

    const again = await admin(['retry-work', '--service', 'PaymentReceipt', '--key', paymentKey]);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /No parked work PaymentReceipt\//);
  });

  it('refuses an unknown service before touching the database', async () => {
    const r = await runScript('services/admin/cli.ts', ['retry-work', '--service', 'Nope', '--key', 'x'], { ...process.env, DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--service must be one of Housekeeping, InvoiceMail/);
  });
});
