/**
 * The server under test, one per process: `node test/bench/server.ts <h|s|i|app>`, forked by run.ts.
 *
 * Each kind has its own process so that the load generator (the parent) and the server never share a thread, and
 * so that a baseline's JIT state cannot help or hurt the real app. All database-backed kinds build
 * their pool with the same createSql settings and DB_POOL_MAX, and go through Db.read / Db.tx like the app does,
 * so S and I are the floor the real routes are compared against, not a different driver set-up.
 *
 * Protocol (IPC): the child sends {type:'ready', port} once listening; the parent sends {type:'stop'} and the child
 * closes its server and pool and exits 0. If the parent goes away, the child exits on its own.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { buildApp } from '../../services/api/app.ts';
import { createKeyring, parseMasterKey } from '../../services/shared/crypto.ts';
import { createSql, Db, type Sql, type Tx } from '../../services/shared/db.ts';
import { uuidv7 } from '../../services/shared/ids.ts';
import { realClock } from '../../services/shared/clock.ts';
import { createPostgresDocumentStore } from '../../services/documents/postgres-document-store.ts';
import { CUSTOMER_COLUMNS, type CustomerRow } from '../../services/customers/customer-queries.ts';
import { BENCH_TABLE, SERVER_KINDS, type ReadyMessage, type ServerKind, type UsageMessage } from './protocol.ts';

function need(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set (this process is started by test/bench/run.ts)`);
  return v;
}

/**
 * Every server's Db, counting units of work in flight (one more await per unit, for baselines and app alike).
 * When a run ends, autocannon drops its sockets while requests still wait for a permit; their handlers carry on,
 * and closing the pool under them would log spurious CONNECTION_ENDED errors. Shutdown waits for zero first.
 */
class CountingDb extends Db {
  inFlight = 0;

  override async read<T>(fn: (sql: Sql) => Promise<T>): Promise<T> {
    this.inFlight++;
    try {
      return await super.read(fn);
    } finally {
      this.inFlight--;
    }
  }

  override async tx<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    this.inFlight++;
    try {
      return await super.tx(fn);
    } finally {
      this.inFlight--;
    }
  }

  /** Resolves once nothing has been in flight for two checks in a row (a handler may start a second unit). */
  async drained(timeoutMs: number): Promise<void> {
    const until = Date.now() + timeoutMs;
    let quiet = 0;
    while (quiet < 2 && Date.now() < until) {
      quiet = this.inFlight === 0 ? quiet + 1 : 0;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

function openDb(): CountingDb {
  const poolMax = Number(need('DB_POOL_MAX'));
  return new CountingDb(createSql(need('BENCH_DATABASE_URL'), { max: poolMax }), poolMax);
}

/** H: the cost of Fastify itself, a route and a small serialised object. No logger, no hooks. */
async function bareHello(): Promise<FastifyInstance> {
  const app = Fastify({ logger: false });
  app.get('/h', async () => ({ ok: true, service: 'bench', n: 1 }));
  return app;
}

/**
 * S: one primary-key SELECT through the same pool and gate. It selects the very columns the customer route reads,
 * so both pay the same wire and row-parsing cost; what the real route adds on top is the app's own work.
 */
async function bareSelect(db: Db): Promise<FastifyInstance> {
  const app = Fastify({ logger: false });
  app.get<{ Params: { id: string } }>('/s/:id', async (req, reply) => {
    const id = req.params.id;
    const [row] = await db.read(
      (sql) => sql<{ id: string; name: string }[]>`
        SELECT ${sql(CUSTOMER_COLUMNS)}, cpr_enc IS NOT NULL AS has_cpr FROM customers WHERE id = ${id}`,
    );
    if (!row) return reply.code(404).send({ error: 'not found' });
    return { id: row.id, name: row.name };
  });
  /*
   * S50, a diagnostic floor for the list route (no target): the same 50-row page query the list runs, mapped to
   * the API's field names and serialised, but without decryption, the response schema, auth or a cursor. What
   * the list costs beyond this is the app's own work; what this costs beyond S is the price of 50 rows.
   */
  app.get<{ Params: { org: string } }>('/s50/:org', async (req) => {
    const org = req.params.org;
    const rows = await db.read(
      (sql) => sql<CustomerRow[]>`
        SELECT ${sql(CUSTOMER_COLUMNS)}, cpr_enc IS NOT NULL AS has_cpr
        FROM customers WHERE organization_id = ${org} ORDER BY id DESC LIMIT 51`,
    );
    const data = rows.slice(0, 50).map((r) => ({
      id: r.id,
      type: r.type,
      name: r.name,
      cvr: r.cvr,
      address: r.address,
      email: null,
      phone: null,
      contactPerson: r.contact_person,
      language: r.language,
      externalReference: r.external_reference,
      metadata: r.metadata,
      hasCpr: r.has_cpr,
      createdAt: r.created_at.toISOString(),
      updatedAt: r.updated_at.toISOString(),
    }));
    return { data, meta: { nextCursor: null } };
  });
  return app;
}

/** I: one INSERT in a transaction (BEGIN, INSERT, COMMIT) of the posted JSON body, through Db.tx. */
async function bareInsert(db: Db): Promise<FastifyInstance> {
  const app = Fastify({ logger: false });
  app.post('/i', async (req, reply) => {
    const id = uuidv7();
    const body = req.body as Record<string, unknown>;
    await db.tx((tx) => tx`INSERT INTO ${tx(BENCH_TABLE)} (id, body) VALUES (${id}, ${tx.json(body as never)})`);
    return reply.code(201).send({ id });
  });
  return app;
}

/** The real app, as production builds it, with rate limiting off so the limiter never answers 429. */
async function realApp(db: Db): Promise<FastifyInstance> {
  const keyring = createKeyring(parseMasterKey(need('BENCH_MASTER_KEY')));
  return buildApp({
    db,
    keyring,
    // The customer routes render no documents; a stub keeps Chromium out of the process and out of the figures.
    pdf: {
      renderInvoice: () => Promise.reject(new Error('the bench renders no documents')),
      renderReceipt: () => Promise.reject(new Error('the bench renders no documents')),
      close: async () => {},
    },
    documents: createPostgresDocumentStore(),
    clock: realClock,
    // Nor do they send mail.
    mailDispatch: { dispatch: () => Promise.reject(new Error('the bench sends no mail')) },
    mailDomain: 'bench.invalid',
    config: {
      rateLimitDefault: 0,
      rateLimitDocument: 0,
      authCacheTtlMs: 30_000,
      logLevel: process.env.BENCH_LOG_LEVEL || 'warn',
    },
    // Anything logged at warn or above is worth seeing next to the figures, not mixed into the table on stdout.
    logStream: process.stderr,
  });
}

async function main(): Promise<void> {
  const kind = process.argv[2] as ServerKind | undefined;
  if (!kind || !SERVER_KINDS.includes(kind)) throw new Error('usage: node test/bench/server.ts <h|s|i|app>');
  if (!process.send) throw new Error('test/bench/server.ts must be forked with an IPC channel (run.ts does that)');

  const db = kind === 'h' ? undefined : openDb();
  const app = kind === 'h' ? await bareHello() : kind === 's' ? await bareSelect(db!) : kind === 'i' ? await bareInsert(db!) : await realApp(db!);

  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    try {
      await app.close();
      await db?.drained(10_000);
      await db?.close();
    } finally {
      // An explicit exit (not just an empty event loop) lets --cpu-prof write its profile every time.
      process.exit(code);
    }
  };
  process.on('message', (msg: { type?: string }) => {
    if (msg?.type === 'stop') void stop(0);
    // The parent samples this around a measured run to get the server's own CPU cost per request.
    if (msg?.type === 'usage') process.send!({ type: 'usage', cpu: process.cpuUsage() } satisfies UsageMessage);
  });
  // The parent died or closed the channel: never linger as a stray process.
  process.on('disconnect', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));

  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('server has no TCP address');
  const ready: ReadyMessage = { type: 'ready', port: address.port };
  process.send(ready);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
