/**
 * The workflows side of the wake stage (wake.ts): the real WakeScheduler objects with the real wake-index activities
 * and the schedulers' listener, beside a probe object whose handlers are as cheap as a handler gets, so that what is
 * measured is the scheduler: `WakeProbe.wake` is a wake-index target (it records when it started, moves its row a
 * year on as a handler that took its step would, and releases its claim through the same wrapper as every real
 * handler). The stage also calls it straight through the ingress, for the engine's bare rate of starting it.
 * Settings come as environment (DATABASE_URL, RESTATE_INGRESS_URL, RESTATE_ADMIN_URL, DB_POOL_MAX). Answers `ready`
 * over IPC with nothing printed and stops on `stop`.
 */
import * as http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import * as restate from '@restatedev/restate-sdk';
import type { WorkTarget } from '../../contracts/workflows.ts';
import { armShard, claimDueWakes, releaseWake } from '../../services/clock/wake-index.ts';
import { listenForEarlierWakes } from '../../services/clock/wakeups.ts';
import { createSql, Db } from '../../services/shared/db.ts';
import { registerDeployment } from '../../workflows/main.ts';
import { releasing, type WakeClaimActivities } from '../../workflows/shared/wake-claim.ts';
import { createWakeScheduler, type WakeSchedulerActivities } from '../../workflows/wake-scheduler.ts';

const poolMax = Number(process.env.DB_POOL_MAX ?? 10);
const db = new Db(createSql(process.env.DATABASE_URL!, { max: poolMax }), poolMax);
const activities: WakeSchedulerActivities & WakeClaimActivities = {
  claimDueWakes: (shard, limit) => claimDueWakes(db, shard, limit),
  armShard: (shard, capMs) => armShard(db, shard, new Date(capMs)),
  releaseWake: (target, token) => releaseWake(db, target, token),
};

const probe = restate.object({
  name: 'WakeProbe',
  handlers: {
    wake: releasing('WakeProbe' as WorkTarget['service'], activities, async (ctx: restate.ObjectContext): Promise<null> => {
      const startedAt = Date.now();
      await ctx.run('record', () =>
        db.read((sql) => sql`
          WITH moved AS (
            UPDATE wake_index SET due_at = due_at + interval '365 days'
            WHERE service = 'WakeProbe' AND key = ${ctx.key}
            RETURNING organization_id, due_at - interval '365 days' AS due_at
          )
          INSERT INTO bench_wake_starts (key, real_due_at, started_at)
          SELECT ${ctx.key}, wake_real_due(organization_id, due_at), to_timestamp(${startedAt} / 1000.0) FROM moved
          ON CONFLICT (key) DO NOTHING`).then(() => null),
      );
      return null;
    }),
  },
});

const handler = restate.createEndpointHandler({ services: [createWakeScheduler(activities), probe], logger: () => {} });
const server = http2.createServer(handler);
await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
await registerDeployment(process.env.RESTATE_ADMIN_URL!, url, `wake-bench-${Date.now()}`);
const unlisten = await listenForEarlierWakes(db, process.env.RESTATE_INGRESS_URL!, () => {});
process.send!({ type: 'ready' });
process.on('message', (m: { type?: string }) => {
  if (m.type !== 'stop') return;
  void unlisten()
    .then(() => db.close())
    .finally(() => process.exit(0));
});
