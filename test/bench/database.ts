/**
 * The bench's own database: a fresh `faktura_bench_<stamp>` on the server DATABASE_URL points at, or on an
 * embedded PostgreSQL in a temporary directory when DATABASE_URL is unset. Either way it is migrated, gets the
 * bench-only insert table, one organisation with a full-scope key, and a seeded set of customers, and it is
 * dropped (or the embedded server stopped and its directory removed) when the bench ends.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { startEmbeddedPostgres, type EmbeddedPg } from '../../deploy/local/embedded-postgres.ts';
import { freePort } from '../../deploy/local/ports.ts';
import { migrate } from '../../services/db/migrate.ts';
import { createSql, Db } from '../../services/shared/db.ts';
import type { Keyring } from '../../services/shared/crypto.ts';
import { createOrganization } from '../../services/organizations/create-organization.ts';
import { createCustomer } from '../../services/customers/create-customer.ts';
import type { CustomerCreate } from '../../contracts/customers.ts';
import { BENCH_CUSTOMERS_TABLE, BENCH_TABLE } from './protocol.ts';

export interface BenchDatabase {
  /** Where the server runs: 'DATABASE_URL' or 'embedded'. */
  server: 'DATABASE_URL' | 'embedded';
  name: string;
  url: string;
  /**
   * Creates and migrates another database on the same server, dropped by close(): for a stage that must not inherit
   * what earlier stages left behind (their queued receipts and sweeps would otherwise run during its measurement).
   */
  sibling(suffix: string): Promise<string>;
  /** Drops the database (and its siblings) and stops what was started for it; safe to call twice. */
  close(): Promise<void>;
}

export async function openBenchDatabase(
  name: string,
  log: (msg: string) => void,
  opts: { statementStats?: boolean } = {},
): Promise<BenchDatabase> {
  let embedded: EmbeddedPg | undefined;
  let tempDir: string | undefined;
  let adminUrl: string;
  const stopEmbedded = async () => {
    if (embedded) await embedded.stop();
    embedded = undefined;
    if (tempDir) rmSync(tempDir, { recursive: true, force: true });
    tempDir = undefined;
  };

  if (process.env.DATABASE_URL) {
    adminUrl = process.env.DATABASE_URL;
    log(`PostgreSQL from DATABASE_URL; creating database ${name}`);
  } else {
    tempDir = mkdtempSync(join(tmpdir(), 'faktura-bench-pg-'));
    // The embedded server runs as the postgres user, which must be able to enter the directory.
    chmodSync(tempDir, 0o755);
    try {
      const settings = opts.statementStats ? ['shared_preload_libraries=pg_stat_statements', 'pg_stat_statements.track=all'] : [];
      embedded = await startEmbeddedPostgres(join(tempDir, 'data'), await freePort(), () => {}, settings);
    } catch (err) {
      await stopEmbedded();
      throw err;
    }
    adminUrl = embedded.adminUrl;
    log(`embedded PostgreSQL on port ${embedded.port} in ${tempDir}; creating database ${name}`);
  }

  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`CREATE DATABASE ${name}`);
  } catch (err) {
    await admin.end();
    await stopEmbedded();
    throw err;
  }
  await admin.end();

  const urlOf = (db: string) => {
    const url = new URL(adminUrl);
    url.pathname = `/${db}`;
    return url.toString();
  };
  const siblings: string[] = [];
  let closed = false;
  return {
    server: embedded ? 'embedded' : 'DATABASE_URL',
    name,
    url: urlOf(name),
    async sibling(suffix) {
      const siblingName = `${name}_${suffix}`;
      const create = postgres(adminUrl, { max: 1, onnotice: () => {} });
      try {
        await create.unsafe(`CREATE DATABASE ${siblingName}`);
      } finally {
        await create.end();
      }
      siblings.push(siblingName);
      const sql = createSql(urlOf(siblingName), { max: 1 });
      try {
        await migrate(sql);
      } finally {
        await sql.end();
      }
      return urlOf(siblingName);
    },
    async close() {
      if (closed) return;
      closed = true;
      try {
        const drop = postgres(adminUrl, { max: 1, onnotice: () => {} });
        try {
          for (const db of [...siblings, name]) await drop.unsafe(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
        } finally {
          await drop.end();
        }
      } finally {
        await stopEmbedded();
      }
    },
  };
}

/** A valid create body with e-mail and phone, so every create encrypts two fields and computes a blind index. */
export function customerBody(n: number): CustomerCreate {
  return {
    type: 'company',
    name: `Bench Kunde ${n} ApS`,
    cvr: String(10_000_000 + (n % 89_999_999)),
    email: `bogholderi+${n}@kunde.example.dk`,
    phone: `+45 ${String(20_000_000 + (n % 79_999_999)).replace(/(\d{2})(?=\d)/g, '$1 ')}`,
    address: { street: `Vestergade ${(n % 200) + 1}`, postalCode: '8000', city: 'Aarhus C', country: 'DK' },
    contactPerson: 'Mette Hansen',
    language: 'da',
    externalReference: `bench-${n}`,
    metadata: { source: 'bench' },
  };
}

export interface Seeded {
  organizationId: string;
  /** An organisation of its own for the C0 floor's stored responses (its customers are in a table of their own). */
  floorOrganizationId: string;
  apiKey: string;
  customerIds: string[];
}

/**
 * Migrates, creates the I baseline's table, one organisation (its first key holds every scope) and `count`
 * customers through the createCustomer use case, `poolMax` transactions at a time, and a second organisation for C0.
 */
export async function prepare(url: string, keyring: Keyring, count: number, poolMax: number): Promise<Seeded> {
  const db = new Db(createSql(url, { max: poolMax }), poolMax);
  try {
    await migrate(db.sql);
    await db.sql.unsafe(
      `CREATE TABLE ${BENCH_TABLE} (id uuid PRIMARY KEY, body jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`,
    );
    // C0's customers go to a copy of the table (same columns, checks and indexes; no foreign keys), so that they
    // never become the newest rows the list and S50 page through, nor rows the app would try to decrypt.
    await db.sql.unsafe(`CREATE TABLE ${BENCH_CUSTOMERS_TABLE} (LIKE customers INCLUDING ALL)`);
    const seller = { cvr: '12345678', street: 'Nørregade 1', postalCode: '8000', city: 'Aarhus C' };
    const org = await db.tx((tx) => createOrganization(tx, { name: 'Bench ApS', ...seller, sandbox: true }));
    const floorOrg = await db.tx((tx) => createOrganization(tx, { name: 'Bench Floor ApS', ...seller, sandbox: true }));
    const customerIds: string[] = new Array<string>(count);
    let next = 0;
    const worker = async () => {
      for (let n = next++; n < count; n = next++) {
        const c = await db.tx((tx) => createCustomer(tx, keyring, org.organizationId, customerBody(n)));
        customerIds[n] = c.id;
      }
    };
    await Promise.all(Array.from({ length: poolMax }, worker));
    // Fresh statistics, so the planner sees the seeded table as it is rather than as empty.
    await db.sql`ANALYZE`;
    return { organizationId: org.organizationId, floorOrganizationId: floorOrg.organizationId, apiKey: org.apiKey, customerIds };
  } finally {
    await db.close();
  }
}
