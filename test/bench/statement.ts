/**
 * The bank statement benchmark: how fast an imported camt.053 statement's entries are matched and booked, against the
 * payment route's own rate.
 *
 * In the bench process, on a database of its own, through `app.inject` (no network, like the e-invoice stage):
 * - S: one `POST /v1/bank-statements` of a statement with `entries` credits against as many open invoices, half
 *   naming their invoice's FI-kort payment id in the structured reference, half its number in the unstructured
 *   remittance with the exact balance; every entry is matched and booked. Entries per second = entries / the call.
 * - D: the same document again under a new key: every entry a duplicate, nothing booked (what a re-sent statement costs).
 * - P1, Pc: `POST /v1/invoices/{id}/payments` paying `routeInvoices` other open invoices in full, from 1 and from
 *   `concurrency` callers in a closed loop: payments per second.
 * S / P1 is the import's rate against registering the same payments one by one; no target (a diagnostic).
 */
import { buildApp } from '../../services/api/app.ts';
import { realClock } from '../../services/shared/clock.ts';
import { addDays, copenhagenToday } from '../../services/shared/clock.ts';
import type { Keyring } from '../../services/shared/crypto.ts';
import { createSql, Db } from '../../services/shared/db.ts';
import { createOrganization } from '../../services/organizations/create-organization.ts';
import { createCustomer } from '../../services/customers/create-customer.ts';
import { createPostgresDocumentStore } from '../../services/documents/postgres-document-store.ts';
import { fikPaymentId } from '../../services/payments/fik-payment-id.ts';
import { customerBody } from './database.ts';

export interface StatementFigures {
  entries: number;
  documentBytes: number;
  /** S: the import, entries matched and booked per second. */
  importSec: number;
  importPerSec: number;
  /** D: the same document again, every entry a duplicate. */
  duplicateSec: number;
  duplicatePerSec: number;
  routeInvoices: number;
  /** P1 and Pc: the payment route, payments per second from 1 and from `concurrency` callers. */
  routeSerialPerSec: number;
  concurrency: number;
  routeConcurrentPerSec: number;
  /** S / P1. */
  ratioSerial: number;
  /** S / Pc. */
  ratioConcurrent: number;
}

/** Gross of the g-th invoice, in øre: 100 kr to about 10 000 kr. */
const grossOf = (g: number): number => 10_000 + ((g * 7919) % 990_000);
const kr = (oere: number): string => `${Math.floor(oere / 100)}.${String(oere % 100).padStart(2, '0')}`;

/** A statement as short as the reader takes it, so that 10 000 entries stay within the 5 MiB a document may be. */
function statementXml(invoices: { number: number; gross: number; fik: string }[], day: string): string {
  const entries = invoices.map((inv, i) =>
    `<Ntry><Amt Ccy="DKK">${kr(inv.gross)}</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts>BOOK</Sts><BookgDt><Dt>${day}</Dt></BookgDt>` +
    `<AcctSvcrRef>BENCH-${i}</AcctSvcrRef><NtryDtls><TxDtls><RmtInf>` +
    (i % 2 === 0 ? `<Strd><CdtrRefInf><Ref>${inv.fik}</Ref></CdtrRefInf></Strd>` : `<Ustrd>Faktura ${inv.number}</Ustrd>`) +
    `</RmtInf></TxDtls></NtryDtls></Ntry>`);
  return '<?xml version="1.0" encoding="UTF-8"?><Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.08"><BkToCstmrStmt>' +
    `<GrpHdr><MsgId>BENCH</MsgId><CreDtTm>${day}T23:00:00+01:00</CreDtTm></GrpHdr><Stmt><Id>BENCH-1</Id>` +
    `<Acct><Id><IBAN>DK5000400440116243</IBAN></Id></Acct>${entries.join('')}</Stmt></BkToCstmrStmt></Document>`;
}

export async function benchStatement(
  url: string,
  keyring: Keyring,
  opts: { entries: number; routeInvoices: number; concurrency: number; poolMax: number; log: (msg: string) => void },
): Promise<StatementFigures> {
  const db = new Db(createSql(url, { max: opts.poolMax }), opts.poolMax);
  const app = await buildApp({
    db,
    keyring,
    pdf: { render: () => Promise.reject(new Error('the statement bench renders nothing')), close: async () => {} },
    documents: createPostgresDocumentStore(),
    clock: realClock,
    mailDispatch: { dispatch: () => Promise.reject(new Error('the statement bench does not send')) },
    mailDomain: 'faktura.invalid',
    config: { rateLimitDefault: 0, rateLimitDocument: 0, authCacheTtlMs: 60_000, logLevel: 'warn' },
  });
  try {
    const org = await db.tx((tx) =>
      createOrganization(tx, { name: 'Bench Bank ApS', cvr: '12345678', sandbox: false, street: 'Nørregade 1', postalCode: '8000', city: 'Aarhus C', fiCreditorNumber: '85799665' }),
    );
    const organizationId = org.organizationId;
    const customers: string[] = [];
    for (let i = 0; i < 100; i++) customers.push((await db.tx((tx) => createCustomer(tx, keyring, organizationId, customerBody(800_000 + i)))).id);
    const total = opts.entries + opts.routeInvoices;
    const today = copenhagenToday(new Date());
    const numbers = Array.from({ length: total }, (_, i) => i + 1);
    // Open invoices written straight into the tables (issuing them would render as many PDFs: the issuing stage's
    // subject), each with the payment id its number gives.
    const seeded = await db.tx(async (tx) => {
      const doc = await createPostgresDocumentStore().put(tx, { organizationId, contentType: 'application/pdf', bytes: Buffer.from('%PDF-1.4\n% bench placeholder\n') });
      const rows = await tx<{ id: string; number: number; gross_oere: number; fik_payment_id: string }[]>`
        INSERT INTO invoices (id, organization_id, type, status, number, customer_id, issue_date, due_date, payment_terms_days,
                              net_oere, vat_oere, gross_oere, document_sha256, issued_at, fik_payment_id, fik_creditor_number)
        SELECT gen_random_uuid(), ${organizationId}, 'invoice', 'issued', n, (${customers}::uuid[])[1 + n % ${customers.length}],
               ${today}::date - 7, ${today}::date + 7, 14, 10000 + (n * 7919) % 990000, 0, 10000 + (n * 7919) % 990000, ${doc.sha256}, now(),
               fik, '85799665'
        FROM unnest(${numbers}::bigint[], ${numbers.map(fikPaymentId)}::text[]) AS s (n, fik)
        RETURNING id, number, gross_oere, fik_payment_id`;
      await tx`INSERT INTO number_series (organization_id, next_number) VALUES (${organizationId}, ${total + 1})
               ON CONFLICT (organization_id) DO UPDATE SET next_number = ${total + 1}`;
      return rows.sort((a, b) => a.number - b.number);
    });
    await db.sql.unsafe('VACUUM ANALYZE invoices');
    const statementInvoices = seeded.slice(0, opts.entries).map((r) => ({ number: r.number, gross: r.gross_oere, fik: r.fik_payment_id }));
    const routeInvoices = seeded.slice(opts.entries);
    for (const [i, r] of statementInvoices.entries()) if (r.gross !== grossOf(i + 1)) throw new Error('seeded amounts differ');
    const day = addDays(today, -1);
    const xml = statementXml(statementInvoices, day);
    const headers = (key: string, type = 'application/xml') => ({ authorization: `Bearer ${org.apiKey}`, 'content-type': type, 'idempotency-key': key });

    const importOnce = async (key: string, want: 'matched' | 'duplicate'): Promise<number> => {
      const t0 = performance.now();
      const res = await app.inject({ method: 'POST', url: '/v1/bank-statements', headers: headers(key), payload: xml });
      const sec = (performance.now() - t0) / 1000;
      if (res.statusCode !== 201) throw new Error(`POST /v1/bank-statements answered ${res.statusCode}: ${res.body.slice(0, 500)}`);
      const counts = (JSON.parse(res.body) as { data: { counts: Record<string, number> } }).data.counts;
      if (counts[want] !== opts.entries) throw new Error(`expected ${opts.entries} ${want}, got ${JSON.stringify(counts)}`);
      return sec;
    };
    opts.log(`statement: importing ${opts.entries} entries (${(Buffer.byteLength(xml) / 1024 / 1024).toFixed(2)} MiB) against ${total} open invoices`);
    const importSec = await importOnce(`bench-statement-${process.pid}-1`, 'matched');
    const duplicateSec = await importOnce(`bench-statement-${process.pid}-2`, 'duplicate');

    const payRoute = async (invoices: typeof routeInvoices, concurrency: number, tag: string): Promise<number> => {
      let next = 0;
      const t0 = performance.now();
      await Promise.all(Array.from({ length: concurrency }, async () => {
        while (next < invoices.length) {
          const inv = invoices[next++]!;
          const res = await app.inject({
            method: 'POST', url: `/v1/invoices/${inv.id}/payments`, headers: headers(`bench-pay-${tag}-${process.pid}-${inv.number}`, 'application/json'),
            payload: JSON.stringify({ amountOere: inv.gross_oere, paymentDate: day }),
          });
          if (res.statusCode !== 201) throw new Error(`POST …/payments answered ${res.statusCode}: ${res.body.slice(0, 300)}`);
        }
      }));
      return invoices.length / ((performance.now() - t0) / 1000);
    };
    const half = Math.floor(routeInvoices.length / 2);
    opts.log(`statement: the payment route on ${half} invoices from 1 caller, then ${routeInvoices.length - half} from ${opts.concurrency}`);
    const routeSerialPerSec = await payRoute(routeInvoices.slice(0, half), 1, 'serial');
    const routeConcurrentPerSec = await payRoute(routeInvoices.slice(half), opts.concurrency, 'concurrent');
    const importPerSec = opts.entries / importSec;
    return {
      entries: opts.entries,
      documentBytes: Buffer.byteLength(xml),
      importSec,
      importPerSec,
      duplicateSec,
      duplicatePerSec: opts.entries / duplicateSec,
      routeInvoices: routeInvoices.length,
      routeSerialPerSec,
      concurrency: opts.concurrency,
      routeConcurrentPerSec,
      ratioSerial: importPerSec / routeSerialPerSec,
      ratioConcurrent: importPerSec / routeConcurrentPerSec,
    };
  } finally {
    await app.close();
    await db.close();
  }
}

export function formatStatement(f: StatementFigures): string {
  const row = (name: string, perSec: number, extra = '') => `  ${name.padEnd(58)} ${perSec.toFixed(0).padStart(8)}/s${extra}`;
  return [
    `Bank statement import (${f.entries} entries, ${(f.documentBytes / 1024 / 1024).toFixed(2)} MiB, against ${f.entries + f.routeInvoices} open invoices)`,
    row('S: POST /v1/bank-statements, entries matched and booked', f.importPerSec, `   (${f.importSec.toFixed(1)} s)`),
    row('D: the same document again, every entry a duplicate', f.duplicatePerSec, `   (${f.duplicateSec.toFixed(1)} s)`),
    row('P1: POST /v1/invoices/{id}/payments, 1 caller', f.routeSerialPerSec),
    row(`Pc: POST /v1/invoices/{id}/payments, ${f.concurrency} callers`, f.routeConcurrentPerSec),
    `  S/P1 ${f.ratioSerial.toFixed(2)}   S/Pc ${f.ratioConcurrent.toFixed(2)}   (diagnostic, no target)`,
  ].join('\n');
}
