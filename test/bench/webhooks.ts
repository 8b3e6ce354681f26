/**
 * The webhook fan-out benchmark: how fast committed events reach integrators' receivers.
 *
 * Against the bench database: a restate-server of its own (temp directory); the workflows process as production
 * runs it (`runWorkflows`: relay, fan-out, delivery objects, sweeps), forked; and in this process, standing in for
 * the API, the writers and `receivers` real HTTP receivers on loopback, each registered as an endpoint of the same
 * event type, so every event makes `receivers` deliveries. Events are written the way every use case writes them:
 * `recordEvent` in a transaction of its own; the commit notifies the relay.
 *
 * - Throughput: `events` events committed as fast as 16 writers can; deliveries per second is every delivery over
 *   the time from the first commit to the last arrival.
 * - Latency: `events` events committed at a fixed `rate` (open loop: one every 1/rate s, whatever the system does);
 *   the delay of a delivery is its first arrival at the receiver minus its event's commit. Target: p99 ≤ 1 s at
 *   200 events/s.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { freePort } from '../../deploy/local/ports.ts';
import { startRestateServer } from '../../deploy/local/restate-server.ts';
import { recordEvent } from '../../services/events/record-event.ts';
import { createOrganization } from '../../services/organizations/create-organization.ts';
import type { Keyring } from '../../services/shared/crypto.ts';
import { createSql, Db } from '../../services/shared/db.ts';
import { uuidv7 } from '../../services/shared/ids.ts';
import { percentile } from './percentile.ts';
import { newSigningSecret } from '../../services/webhooks/signing.ts';
import { forkBenchWorker } from './worker.ts';

export interface WebhookFigures {
  events: number;
  receivers: number;
  rate: number;
  throughput: { deliveries: number; seconds: number; deliveriesPerSec: number };
  latency: { deliveries: number; offeredRate: number; achievedRate: number; p50Ms: number; p99Ms: number; maxMs: number };
  targetP99Ms: number;
  pass: boolean;
}


/** A receiver that notes when each webhook-id first arrived, in performance.now() time. */
function receiver(): Promise<{ server: Server; url: string; firstSeen: Map<string, number> }> {
  const firstSeen = new Map<string, number>();
  const server = createServer((req, res) => {
    const id = String(req.headers['webhook-id']);
    if (!firstSeen.has(id)) firstSeen.set(id, performance.now());
    req.resume();
    req.on('end', () => {
      res.writeHead(204);
      res.end();
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, firstSeen })),
  );
}

const HERE = dirname(fileURLToPath(import.meta.url));

export async function benchWebhooks(
  url: string,
  keyring: Keyring,
  opts: { events: number; receivers: number; rate: number; poolMax: number; masterKey: Buffer; profileDir?: string | undefined; log: (msg: string) => void },
): Promise<WebhookFigures> {
  const dir = mkdtempSync(join(tmpdir(), 'faktura-bench-restate-'));
  const cleanups: (() => Promise<void>)[] = [() => Promise.resolve(rmSync(dir, { recursive: true, force: true }))];
  const cleanUp = async () => {
    while (cleanups.length) await cleanups.pop()!().catch(() => {});
  };
  try {
    const ports = { ingress: await freePort(), admin: await freePort(), fabric: await freePort() };
    const restate = await startRestateServer({ baseDir: join(dir, 'data'), ports, logFile: join(dir, 'restate.log') });
    cleanups.push(() => restate.stop());
    // The writers (standing in for the API) have this process and a pool of their own; the workflows process (relay,
    // fan-out, delivery objects) is a child, started exactly as `npm run start:workflows` starts it.
    const db = new Db(createSql(url, { max: opts.poolMax }), opts.poolMax);
    cleanups.push(() => db.close());
    const bench = await forkBenchWorker(
      join(HERE, 'webhooks-worker.ts'),
      {
        cwd: resolve(HERE, '../..'),
        execArgv: opts.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${opts.profileDir}`, `--cpu-prof-name=webhooks-workflows-${process.pid}.cpuprofile`] : [],
        env: {
          ...process.env,
          NODE_ENV: 'development',
          DATABASE_URL: url,
          DB_POOL_MAX: String(opts.poolMax),
          DATA_ENCRYPTION_KEY: opts.masterKey.toString('hex'),
          DATA_DIR: join(dir, 'workflows'),
          RESTATE_INGRESS_URL: restate.ingressUrl,
          RESTATE_ADMIN_URL: restate.adminUrl,
          WORKFLOWS_PORT: '0',
          WORKFLOWS_HOST: '127.0.0.1',
          WEBHOOK_ALLOW_LOOPBACK: 'true',
          LOG_LEVEL: 'warn',
        },
      },
      'the workflows process',
      10_000,
    );
    cleanups.push(() => bench.stop());
    const receivers = await Promise.all(Array.from({ length: opts.receivers }, () => receiver()));
    cleanups.push(async () => {
      for (const r of receivers) {
        r.server.closeAllConnections();
        await new Promise<void>((done) => r.server.close(() => done()));
      }
    });

    /** A fresh organisation with one endpoint per receiver, all subscribed to invoice.sent. */
    const organisation = async (name: string) => {
      // Live organisations, as in production: their business time is real time and costs no query.
      const org = await db.tx((tx) => createOrganization(tx, { name, cvr: '12345678', street: 'Nørregade 1', postalCode: '8000', city: 'Aarhus C', sandbox: false }));
      for (const r of receivers) {
        await db.sql`
          INSERT INTO webhook_endpoints (id, organization_id, url, event_types, secret_enc)
          VALUES (${uuidv7()}, ${org.organizationId}, ${r.url}, ${['invoice.sent']}, ${keyring.encrypt(newSigningSecret())})`;
      }
      return org.organizationId;
    };
    const commitEvent = async (organizationId: string): Promise<{ id: string; at: number }> => {
      const entityId = uuidv7();
      const { id } = await db.tx((tx) =>
        recordEvent(tx, { organizationId, type: 'invoice.sent', entityId, data: { invoiceId: entityId, number: 1, channel: 'email', externalReference: null } }),
      );
      return { id, at: performance.now() };
    };
    const allArrived = async (ids: string[], timeoutMs: number) => {
      const until = performance.now() + timeoutMs;
      for (;;) {
        if (ids.every((id) => receivers.every((r) => r.firstSeen.has(id)))) return;
        if (performance.now() > until) {
          const missing = ids.reduce((n, id) => n + receivers.filter((r) => !r.firstSeen.has(id)).length, 0);
          throw new Error(`${missing} of ${ids.length * receivers.length} deliveries did not arrive within ${timeoutMs / 1000} s`);
        }
        await new Promise((r) => setTimeout(r, 5));
      }
    };

    // Warm-up: connections, prepared statements, Restate partitions.
    const warm = await organisation('Bench Webhooks Warm-up');
    const warmIds: string[] = [];
    for (let i = 0; i < 50; i++) warmIds.push((await commitEvent(warm)).id);
    await allArrived(warmIds, 60_000);

    // Throughput: as fast as 16 writers commit.
    opts.log(`webhooks: ${opts.events} events × ${opts.receivers} receivers, flat out`);
    const fast = await organisation('Bench Webhooks Throughput');
    const fastIds: string[] = [];
    const t0 = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < opts.events) {
          next++;
          fastIds.push((await commitEvent(fast)).id);
        }
      }),
    );
    await allArrived(fastIds, 120_000);
    const last = Math.max(...fastIds.flatMap((id) => receivers.map((r) => r.firstSeen.get(id)!)));
    const seconds = (last - t0) / 1000;
    const deliveries = fastIds.length * opts.receivers;

    // Latency at a fixed offered rate, open loop.
    opts.log(`webhooks: ${opts.events} events × ${opts.receivers} receivers at ${opts.rate} events/s`);
    const paced = await organisation('Bench Webhooks Latency');
    const commits: Promise<{ id: string; at: number }>[] = [];
    const start = performance.now();
    for (let i = 0; i < opts.events; i++) {
      const due = start + (i * 1000) / opts.rate;
      const wait = due - performance.now();
      if (wait > 1) await new Promise((r) => setTimeout(r, wait));
      commits.push(commitEvent(paced));
    }
    const committed = await Promise.all(commits);
    const achievedRate = committed.length / ((Math.max(...committed.map((c) => c.at)) - start) / 1000);
    await allArrived(committed.map((c) => c.id), 120_000);
    const delays = committed.flatMap((c) => receivers.map((r) => r.firstSeen.get(c.id)! - c.at)).sort((a, b) => a - b);
    // Where the time goes, from the database's own clock: commit (≈ occurred_at) → delivery row (relay + fan-out)
    // → attempt (delivery object).
    const [stages] = await db.sql<{ fan_p50: number; fan_p99: number; att_p50: number; att_p99: number }[]>`
      SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM d.created_at - e.occurred_at) * 1000) AS fan_p50,
             percentile_disc(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM d.created_at - e.occurred_at) * 1000) AS fan_p99,
             percentile_disc(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM a.attempted_at - d.created_at) * 1000) AS att_p50,
             percentile_disc(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM a.attempted_at - d.created_at) * 1000) AS att_p99
      FROM webhook_deliveries d JOIN events e ON e.organization_id = d.organization_id AND e.id = d.event_id JOIN webhook_attempts a ON a.delivery_id = d.id AND a.number = 1
      WHERE d.organization_id = ${paced}`;
    opts.log(`webhooks: commit → delivery row p50 ${Math.round(Number(stages!.fan_p50))} ms, p99 ${Math.round(Number(stages!.fan_p99))} ms; delivery row → attempt p50 ${Math.round(Number(stages!.att_p50))} ms, p99 ${Math.round(Number(stages!.att_p99))} ms`);
    const p99 = percentile(delays, 99);
    return {
      events: opts.events,
      receivers: opts.receivers,
      rate: opts.rate,
      throughput: { deliveries, seconds: Math.round(seconds * 100) / 100, deliveriesPerSec: Math.round(deliveries / seconds) },
      latency: {
        deliveries: delays.length,
        offeredRate: opts.rate,
        achievedRate: Math.round(achievedRate),
        p50Ms: Math.round(percentile(delays, 50)),
        p99Ms: Math.round(p99),
        maxMs: Math.round(delays[delays.length - 1] ?? 0),
      },
      targetP99Ms: 1000,
      pass: p99 <= 1000,
    };
  } finally {
    await cleanUp();
  }
}

export function formatWebhooks(f: WebhookFigures): string {
  return [
    `Webhook fan-out (${f.events} events × ${f.receivers} local receivers, relay → Restate → delivery objects → HTTP)`,
    `  flat out                          ${String(f.throughput.deliveriesPerSec).padStart(7)} deliveries/s   (${f.throughput.deliveries} in ${f.throughput.seconds} s)`,
    `  at ${String(f.latency.offeredRate).padStart(3)} events/s (achieved ${f.latency.achievedRate})  commit → first attempt   p50 ${String(f.latency.p50Ms).padStart(4)} ms   p99 ${String(f.latency.p99Ms).padStart(4)} ms   max ${f.latency.maxMs} ms`,
    `  target p99 ≤ ${f.targetP99Ms} ms   ${f.pass ? 'PASS' : 'FAIL'}`,
  ].join('\n');
}
