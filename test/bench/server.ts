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
import { encodeCursor } from '../../services/shared/cursor.ts';
import { BENCH_CUSTOMERS_TABLE, BENCH_TABLE, SERVER_KINDS, type ReadyMessage, type ServerKind, type UsageMessage } from './protocol.ts';
import { insertCaseFloor, type CaseBody } from './cases.ts';
import { openLimiterStore, type OpenLimiterStore } from '../../services/shared/limiter-store.ts';

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
  app.get<{ Params: { org: string; id: string } }>('/s/:org/:id', async (req, reply) => {
    const { org, id } = req.params;
    // The customers' primary key is (organization_id, id): a tenant's row is always looked up with its tenant.
    const [row] = await db.read(
      (sql) => sql<{ id: string; name: string }[]>`
        SELECT ${sql(CUSTOMER_COLUMNS)}, cpr_enc IS NOT NULL AS has_cpr FROM customers WHERE organization_id = ${org} AND id = ${id}`,
    );
    if (!row) return reply.code(404).send({ error: 'not found' });
    return { id: row.id, name: row.name };
  });
  /*
   * S50, a diagnostic floor for the list route (no target): what a 50-row page must do at the least. The same page
   * query the list runs, every row's e-mail and phone decrypted (one batch, the keyring's fastest way), every field
   * of the API's Customer under its name, the next page's cursor (MAC'd as the route's), serialised with
   * JSON.stringify; no auth, validation, hooks or response schema. What the list costs beyond this is the app's own
   * work; what this costs beyond S is the price of 50 rows.
   */
  const keyring = createKeyring(parseMasterKey(need('BENCH_MASTER_KEY')));
  app.get<{ Params: { org: string } }>('/s50/:org', async (req) => {
    const org = req.params.org;
    const rows = await db.read(
      (sql) => sql<CustomerRow[]>`
        SELECT ${sql(CUSTOMER_COLUMNS)}, cpr_enc IS NOT NULL AS has_cpr
        FROM customers WHERE organization_id = ${org} ORDER BY id DESC LIMIT 51`,
    );
    const page = rows.slice(0, 50);
    const blobs: (Buffer | null)[] = [];
    for (const r of page) blobs.push(r.email_enc, r.phone_enc);
    const plain = keyring.decryptMany(blobs);
    const data = page.map((r, i) => ({
      id: r.id,
      type: r.type,
      name: r.name,
      cvr: r.cvr,
      address: r.address,
      email: plain[2 * i],
      phone: plain[2 * i + 1],
      contactPerson: r.contact_person,
      language: r.language,
      externalReference: r.external_reference,
      metadata: r.metadata,
      ean: r.ean,
      peppolId: r.peppol_id,
      vatNumber: r.vat_number,
      hasCpr: r.has_cpr,
      createdAt: r.created_at.toISOString(),
      updatedAt: r.updated_at.toISOString(),
    }));
    const nextCursor = rows.length > 50 ? encodeCursor(keyring, { organizationId: org, list: 'customers', filters: [null, null, null] }, [page[49]!.id]) : null;
    return { data, meta: { nextCursor } };
  });
  return app;
}

/** I: one INSERT in a transaction (BEGIN, INSERT, COMMIT) of the posted JSON body, through Db.tx. */
async function bareInsert(db: Db): Promise<FastifyInstance> {
  // The same body limit as POST /v1/cases, for K0's 50-claim, 20-debtor bodies.
  const app = Fastify({ logger: false, bodyLimit: 64 * 1024 });
  const keyring = createKeyring(parseMasterKey(need('BENCH_MASTER_KEY')));
  app.post('/i', async (req, reply) => {
    const id = uuidv7();
    const body = req.body as Record<string, unknown>;
    await db.tx((tx) => tx`INSERT INTO ${tx(BENCH_TABLE)} (id, body) VALUES (${id}, ${tx.json(body as never)})`);
    return reply.code(201).send({ id });
  });
  /*
   * C0, a diagnostic floor for POST /v1/customers (no target): what an idempotent create must do, as cheaply as the
   * schema allows. The key is locked and looked up (a request still running with it must be told so), then the
   * customer row and the key's stored response go in one round trip, then COMMIT. The row goes to a copy of the
   * customers table (same columns, checks and indexes, no foreign key), e-mail and phone as their bytes, not
   * encrypted; no auth, validation, fingerprint or response schema.
   */
  app.post<{ Params: { org: string } }>('/c0/:org/customers', async (req, reply) => {
    const org = req.params.org;
    const key = String(req.headers['idempotency-key']);
    const body = req.body as { type: string; name: string; cvr?: string; email?: string; phone?: string; address?: unknown;
      contactPerson?: string; language?: string; externalReference?: string; metadata?: unknown };
    const response = await db.tx(async (tx) => {
      const [probe] = await tx<{ locked: boolean; now: Date; response_status: number | null }[]>`
        SELECT pg_try_advisory_xact_lock(hashtextextended(${key}, 0)) AS locked, now() AS now, k.response_status
        FROM (SELECT 1) AS one LEFT JOIN idempotency_keys k ON k.organization_id = ${org} AND k.key = ${key}`;
      if (!probe!.locked || probe!.response_status !== null) return undefined;
      const id = uuidv7();
      const text = JSON.stringify({ data: { id, ...body, hasCpr: false, createdAt: probe!.now, updatedAt: probe!.now }, meta: {} });
      await Promise.all([
        tx`INSERT INTO ${tx(BENCH_CUSTOMERS_TABLE)} ${tx({
          id, organization_id: org, type: body.type, name: body.name, cvr: body.cvr ?? null, address: body.address ?? null,
          contact_person: body.contactPerson ?? null, language: body.language ?? null, external_reference: body.externalReference ?? null,
          metadata: body.metadata ?? null, email_enc: body.email ? Buffer.from(body.email) : null,
          email_bidx: body.email ? Buffer.from(body.email.toLowerCase()) : null, phone_enc: body.phone ? Buffer.from(body.phone) : null,
          created_at: probe!.now, updated_at: probe!.now,
        } as Record<string, unknown>)}`.execute(),
        tx`INSERT INTO idempotency_keys (organization_id, key, request_hash, response_status, response_body, response_location)
           VALUES (${org}, ${key}, ${Buffer.alloc(32)}, 201, ${Buffer.from(text)}, ${`/v1/customers/${id}`})`.execute(),
      ]);
      return text;
    });
    if (!response) return reply.code(409).send({ error: 'key in use' });
    return reply.code(201).type('application/json; charset=utf-8').send(response);
  });
  /*
   * P0, a diagnostic floor for payment registration (no target): what any registration must do atomically, as
   * cheaply as the schema allows. One statement locks and looks up the key, locks the invoice and reads its paid
   * sum; then the payment, its `payment.received` event and the key's stored response go in one round trip; then
   * COMMIT. No auth, validation, encryption, fingerprint, timeline, status update or past-due check; the schema's
   * own triggers and foreign keys run as for the real route. What the route costs beyond this is the app's work.
   */
  app.post<{ Params: { org: string; invoiceId: string } }>('/p0/:org/v1/invoices/:invoiceId/payments', async (req, reply) => {
    const key = String(req.headers['idempotency-key']);
    const body = req.body as { amountOere: number; paymentDate: string };
    const response = await db.tx(async (tx) => {
      // The key's lock and lookup ride in the invoice's statement: one round trip for everything read.
      const [inv] = await tx<{ locked: boolean; stored: number | null; id: string; organization_id: string; customer_id: string; gross_oere: number; paid: number }[]>`
        SELECT pg_try_advisory_xact_lock(hashtextextended(${key}, 0)) AS locked,
               (SELECT k.response_status FROM idempotency_keys k WHERE k.organization_id = i.organization_id AND k.key = ${key}) AS stored,
               i.id, i.organization_id, i.customer_id, i.gross_oere,
               (SELECT coalesce(sum(p.amount_oere), 0) FROM payments p
                WHERE p.organization_id = i.organization_id AND p.invoice_id = i.id)::bigint AS paid
        FROM invoices i WHERE i.organization_id = ${req.params.org} AND i.id = ${req.params.invoiceId} FOR UPDATE`;
      if (!inv || !inv.locked || inv.stored !== null) return undefined;
      const id = uuidv7();
      const text = JSON.stringify({
        data: { id: inv.id, paidOere: inv.paid + body.amountOere, balanceOere: inv.gross_oere - inv.paid - body.amountOere },
        meta: { outcome: 'partial', paymentId: id },
      });
      await Promise.all([
        tx`INSERT INTO payments (id, organization_id, invoice_id, customer_id, source, booking_key, amount_oere, payment_date, outcome, surplus_oere)
           VALUES (${id}, ${inv.organization_id}, ${inv.id}, ${inv.customer_id}, 'manual', ${key}, ${body.amountOere}, ${body.paymentDate}, 'partial', 0)`.execute(),
        tx`INSERT INTO events (id, organization_id, type, entity_family, entity_id, sekvensnummer, data)
           VALUES (${uuidv7()}, ${inv.organization_id}, 'payment.received', 'payment', ${id}, 1,
                   ${tx.json({ invoiceId: inv.id, amountOere: body.amountOere, paymentDate: body.paymentDate, source: 'manual' })})`.execute(),
        tx`INSERT INTO idempotency_keys (organization_id, key, request_hash, response_status, response_body, response_location)
           VALUES (${inv.organization_id}, ${key}, ${Buffer.alloc(32)}, 201, ${Buffer.from(text)}, ${`/v1/payments/${id}`})`.execute(),
      ]);
      return text;
    });
    if (!response) return reply.code(409).send({ error: 'unknown invoice or key in use' });
    return reply.code(201).type('application/json; charset=utf-8').send(response);
  });
  /*
   * K0, the floor of POST /v1/cases (cases.ts): the case numbered from the series, its 50 claims and 20 debtors
   * (personal fields encrypted with the same keyring) and the stored response, in one transaction; no validation,
   * auth or idempotency look-up.
   */
  app.post<{ Params: { org: string } }>('/k0/:org/cases', async (req, reply) => {
    const key = String(req.headers['idempotency-key']);
    const text = await db.tx((tx) => insertCaseFloor(tx, keyring, req.params.org, key, req.body as CaseBody));
    return reply.code(201).type('application/json; charset=utf-8').send(text);
  });
  return app;
}

/**
 * The real app, as production builds it. `app`: rate limiting off. `applimit`: the API rate limits on, counting in the
 * Redis at BENCH_REDIS_URL as with REDIS_URL in production, at a rate no load reaches (BENCH_RATE_LIMIT, default
 * 1 000 000/s), so every request pays for its decision and none is answered 429.
 */
async function realApp(db: Db, limiter: OpenLimiterStore | undefined): Promise<FastifyInstance> {
  const rate = limiter ? Number(process.env.BENCH_RATE_LIMIT || 1_000_000) : 0;
  const keyring = createKeyring(parseMasterKey(need('BENCH_MASTER_KEY')));
  return buildApp({
    db,
    keyring,
    // The customer routes render no documents; a stub keeps Chromium out of the process and out of the figures.
    pdf: {
      render: () => Promise.reject(new Error('the bench renders no documents')),
      close: async () => {},
    },
    documents: createPostgresDocumentStore(),
    clock: realClock,
    // Nor do they send mail.
    mailDispatch: { dispatch: () => Promise.reject(new Error('the bench sends no mail')) },
    mailDomain: 'bench.invalid',
    ...(limiter ? { limiterStore: limiter.store } : {}),
    config: {
      rateLimitDefault: rate,
      rateLimitDocument: rate,
      authCacheTtlMs: 30_000,
      logLevel: process.env.BENCH_LOG_LEVEL || 'warn',
    },
    // Anything logged at warn or above is worth seeing next to the figures, not mixed into the table on stdout.
    logStream: process.stderr,
  });
}

async function main(): Promise<void> {
  const kind = process.argv[2] as ServerKind | undefined;
  if (!kind || !SERVER_KINDS.includes(kind)) throw new Error(`usage: node test/bench/server.ts <${SERVER_KINDS.join('|')}>`);
  if (!process.send) throw new Error('test/bench/server.ts must be forked with an IPC channel (run.ts does that)');

  const db = kind === 'h' ? undefined : openDb();
  const limiter = kind === 'applimit'
    ? await openLimiterStore(need('BENCH_REDIS_URL'), { warn: (_o, m) => console.error(m), info: (_o, m) => console.error(m) })
    : undefined;
  const app = kind === 'h' ? await bareHello() : kind === 's' ? await bareSelect(db!) : kind === 'i' ? await bareInsert(db!) : await realApp(db!, limiter);

  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    try {
      await app.close();
      if (limiter?.shared && limiter.shared.stats().fallback > 0) console.error(`applimit: ${limiter.shared.stats().fallback} decisions were taken without Redis`);
      await limiter?.close();
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
