/**
 * The figures of docs/operations.md, "Start time and memory": starts the cluster (deploy/local/cluster.ts) on a fresh
 * DATA_DIR and again on the same one, times each step, and reads the memory of every process with everything it
 * started (PSS) when idle after the start, and after a little work (invoices issued and mailed, which wakes Chromium
 * in the API and workflows processes, and payment pages served).
 *
 *   node test/cluster/measure.ts [rounds]    # default 2 rounds (cold and warm start each)
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startCluster, type ProcessMemory, type RunningCluster } from '../../deploy/local/cluster.ts';
import { createOrganization } from '../../services/organizations/create-organization.ts';
import { createSql, Db } from '../../services/shared/db.ts';

const MiB = 1024 * 1024;
const rounds = Number(process.argv[2] ?? 2);
const say = (line: string) => void process.stdout.write(`${line}\n`);

async function start(dataDir: string): Promise<{ cluster: RunningCluster; steps: Record<string, number> }> {
  const steps: Record<string, number> = {};
  const cluster = await startCluster({ ...process.env, DATA_DIR: dataDir, PORT: '0' }, { progress: (step, ms) => (steps[step] = ms) });
  return { cluster, steps };
}

function memoryTable(rows: ProcessMemory[]): string {
  const total = rows.reduce((s, r) => s + r.pssBytes, 0);
  return [...rows.map((r) => `    ${r.name.padEnd(15)} ${(r.pssBytes / MiB).toFixed(0).padStart(5)} MiB  (${r.processes} processes)`), `    ${'total'.padEnd(15)} ${(total / MiB).toFixed(0).padStart(5)} MiB`].join('\n');
}

async function work(cluster: RunningCluster): Promise<void> {
  const db = new Db(createSql(cluster.urls.databaseUrl, { max: 1 }), 1);
  try {
    const org = await db.tx((tx) => createOrganization(tx, { name: 'Måling ApS', cvr: '12345678', street: 'Testvej 1', postalCode: '8000', city: 'Aarhus C', sandbox: true }));
    let n = 0;
    const post = async (path: string, body: unknown) => {
      const res = await fetch(`${cluster.urls.api}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/json', 'idempotency-key': `measure-${Date.now()}-${++n}` },
        body: JSON.stringify(body),
      });
      if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
      return ((await res.json()) as { data: { id: string; url?: string } }).data;
    };
    const customer = await post('/v1/customers', { type: 'company', name: 'Kunde A/S', email: 'ap@kunde.dk' });
    for (let i = 0; i < 20; i++) {
      const inv = await post('/v1/invoices?send=true', { customerId: customer.id, lines: [{ description: 'Rugbrød', quantity: 2, unitPriceOere: 4500 }] });
      const link = await post(`/v1/invoices/${inv.id}/payment-link`, {});
      await (await fetch(link.url!)).text();
    }
    const mails = () => readdirSync(join(cluster.dataDir, 'mail'), { recursive: true }).filter((f) => String(f).endsWith('.eml')).length;
    for (const until = Date.now() + 60_000; mails() < 20 && Date.now() < until; ) await new Promise((r) => setTimeout(r, 200));
    say(`  work: 20 invoices issued, mailed (${mails()} mails) and their pay pages served`);
  } finally {
    await db.close();
  }
}

for (let round = 1; round <= rounds; round++) {
  const dataDir = mkdtempSync(join(tmpdir(), 'faktura-cluster-measure-'));
  try {
    for (const kind of ['cold (fresh DATA_DIR: initdb, provisioning)', 'warm (the same DATA_DIR again)']) {
      const { cluster, steps } = await start(dataDir);
      say(`round ${round}, ${kind}: ready after ${(cluster.startupMs / 1000).toFixed(1)} s`);
      say(`  steps (s): ${Object.entries(steps).map(([k, v]) => `${k} ${(v / 1000).toFixed(1)}`).join(', ')}`);
      if (kind.startsWith('cold') && round === 1) {
        await new Promise((r) => setTimeout(r, 3000));
        say(`  memory, idle after the start:\n${memoryTable(cluster.memory())}`);
        await work(cluster);
        say(`  memory after the work:\n${memoryTable(cluster.memory())}`);
      }
      const t0 = performance.now();
      await cluster.stop();
      say(`  stopped in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
