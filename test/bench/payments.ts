/**
 * The payments benchmark's data and requests, run by run.ts against the real app server:
 *
 * - PAY: `POST /v1/invoices/{id}/payments`, a partial payment on a random one of `openInvoices` issued invoices
 *   (spread over 100 customers, so requests rarely queue on one invoice's row lock), a unique Idempotency-Key each.
 *   Compared with I, the bare INSERT in a transaction, measured in the same run. Target ≥ 0.5 × I.
 * - BALANCE: `GET /v1/customers/{id}/balance` for one customer with `balanceInvoices` issued invoices (a long
 *   history, see kindOf below), at a fixed offered load so that the p99 describes the read and not a queue the
 *   bench built itself. Target p99 ≤ 20 ms.
 *
 * The invoices are written straight into the tables in a few set-based statements: issuing 12 000 invoices through
 * the API would render 12 000 PDFs, which is what the issuing bench measures, not this one. They look like issued
 * invoices to every reader (a number, dates, a locked document, lines, payments with their booking keys), and the
 * tables are vacuumed and analysed afterwards, as autovacuum would have done for a customer with years of history.
 */
import { createSql, Db } from '../../services/shared/db.ts';
import type { Keyring } from '../../services/shared/crypto.ts';
import { addDays, copenhagenToday } from '../../services/shared/clock.ts';
import { createCustomer } from '../../services/customers/create-customer.ts';
import { createPostgresDocumentStore } from '../../services/documents/postgres-document-store.ts';
import { customerBody } from './database.ts';

export interface PaymentsSeed {
  balanceCustomerId: string;
  balanceInvoices: number;
  openInvoiceIds: string[];
  /** What the seeded balance must read, computed in JavaScript from the seeding rules (the check compares). */
  expected: { outstandingOere: number; creditOere: number };
}

/** Gross of the n-th invoice of the long-history customer, in øre: 100 kr to about 10 000 kr. */
const grossOf = (n: number): number => 10_000 + ((n * 7919) % 990_000);

/**
 * What the long-history customer's g-th invoice (1 = oldest) is, 12 a day over about 2⅓ years: the newest 40 are
 * open (every 4th half paid), 20 older ones are still open, overdue, with a reminder fee; 1 in 1000 was overpaid by
 * 50 kr, 1 in 100 was credited, 1 in 100 was paid in full after a reminder fee; the rest were paid in full.
 */
type Kind = 'half' | 'open' | 'overdue_fee' | 'over' | 'credited' | 'fee_paid' | 'paid';
function kindOf(g: number, n: number): Kind {
  if (g > n - 40) return g % 4 === 0 ? 'half' : 'open';
  if (g % 500 === 250) return 'overdue_fee';
  if (g % 1000 === 997) return 'over';
  if (g % 100 === 96) return 'credited';
  if (g % 100 === 98) return 'fee_paid';
  return 'paid';
}

/** The same rule in SQL, over the invoice's position g. */
const kindSql = (g: string, n: number): string =>
  `CASE WHEN ${g} > ${n - 40} THEN CASE WHEN ${g} % 4 = 0 THEN 'half' ELSE 'open' END ` +
  `WHEN ${g} % 500 = 250 THEN 'overdue_fee' WHEN ${g} % 1000 = 997 THEN 'over' WHEN ${g} % 100 = 96 THEN 'credited' ` +
  `WHEN ${g} % 100 = 98 THEN 'fee_paid' ELSE 'paid' END`;

function expectedFigures(n: number): { outstandingOere: number; creditOere: number } {
  let outstandingOere = 0;
  let creditOere = 0;
  for (let g = 1; g <= n; g++) {
    const gross = grossOf(g);
    const kind = kindOf(g, n);
    if (kind === 'half') outstandingOere += gross - Math.floor(gross / 2);
    if (kind === 'open') outstandingOere += gross;
    if (kind === 'overdue_fee') outstandingOere += gross + 10_000;
    if (kind === 'over') creditOere -= 5_000;
  }
  return { outstandingOere, creditOere };
}

export async function seedPayments(
  url: string,
  keyring: Keyring,
  organizationId: string,
  opts: { balanceInvoices: number; openInvoices: number; poolMax: number },
): Promise<PaymentsSeed> {
  const db = new Db(createSql(url, { max: opts.poolMax }), opts.poolMax);
  try {
    const today = copenhagenToday(new Date());
    const doc = await db.tx((tx) =>
      createPostgresDocumentStore().put(tx, { organizationId, contentType: 'application/pdf', bytes: Buffer.from('%PDF-1.4\n% bench placeholder\n') }),
    );
    const balanceCustomer = await db.tx((tx) => createCustomer(tx, keyring, organizationId, { ...customerBody(900_000), name: 'Lang Historik A/S' }));
    const payers: string[] = [];
    for (let i = 0; i < 100; i++) payers.push((await db.tx((tx) => createCustomer(tx, keyring, organizationId, customerBody(900_001 + i)))).id);

    const openInvoiceIds = await db.tx(async (tx) => {
      const [series] = await tx<{ next: number }[]>`
        INSERT INTO number_series (organization_id, next_number) VALUES (${organizationId}, 1)
        ON CONFLICT (organization_id) DO UPDATE SET next_number = number_series.next_number
        RETURNING next_number AS next`;
      const base = series!.next - 1;
      const n = opts.balanceInvoices;
      const kind = tx.unsafe(kindSql('g', n));
      const kindOfNumber = tx.unsafe(kindSql(`(number - ${base})`, n));
      // The long history: invoice numbers base+1..base+n, due dates running back from today. Invoices that end up
      // paid after a fee are issued first: fees go on open invoices only.
      await tx`
        INSERT INTO invoices (id, organization_id, type, status, number, customer_id, issue_date, due_date, payment_terms_days,
                              net_oere, vat_oere, gross_oere, document_sha256, issued_at, created_at, updated_at)
        SELECT gen_random_uuid(), ${organizationId}, 'invoice',
               CASE WHEN ${kind} IN ('paid', 'over') THEN 'paid' ELSE 'issued' END,
               ${base} + g, ${balanceCustomer.id},
               (${today}::date - ((${n} - g) / 12)::int - 14), (${today}::date - ((${n} - g) / 12)::int + 6), 20,
               (10000 + (g * 7919) % 990000), 0, (10000 + (g * 7919) % 990000), ${doc.sha256}, now(), now(), now()
        FROM generate_series(1, ${n}) AS g`;
      await tx`
        INSERT INTO invoice_lines (organization_id, invoice_id, position, description, quantity, unit_price_oere, vat_rate_bps, vat_exemption_reason,
                                   discount_oere, net_oere, vat_oere, gross_oere)
        SELECT organization_id, id, 0, 'Abonnement', 1, gross_oere, 0, 'ML13', 0, gross_oere, 0, gross_oere
        FROM invoices WHERE organization_id = ${organizationId} AND customer_id = ${balanceCustomer.id}`;
      await tx`
        INSERT INTO invoice_fees (id, organization_id, invoice_id, customer_id, kind, amount_oere)
        SELECT gen_random_uuid(), ${organizationId}, id, customer_id, 'reminder', 10000
        FROM invoices
        WHERE organization_id = ${organizationId} AND customer_id = ${balanceCustomer.id} AND ${kindOfNumber} IN ('overdue_fee', 'fee_paid')`;
      await tx`
        UPDATE invoices SET status = 'paid'
        WHERE organization_id = ${organizationId} AND customer_id = ${balanceCustomer.id} AND ${kindOfNumber} = 'fee_paid'`;
      // One payment each, booked on a key like a provider's payment id.
      await tx`
        INSERT INTO payments (id, organization_id, invoice_id, customer_id, source, booking_key, amount_oere, payment_date, outcome, surplus_oere)
        SELECT gen_random_uuid(), ${organizationId}, id, customer_id, 'card', 'seed-' || number,
               CASE k WHEN 'half' THEN gross_oere / 2 WHEN 'over' THEN gross_oere + 5000 WHEN 'fee_paid' THEN gross_oere + 10000 ELSE gross_oere END,
               least(due_date, ${today}::date),
               CASE k WHEN 'half' THEN 'partial' WHEN 'over' THEN 'registered' ELSE 'paid_in_full' END,
               CASE k WHEN 'over' THEN 5000 ELSE 0 END
        FROM (SELECT id, customer_id, number, gross_oere, due_date, ${kindOfNumber} AS k FROM invoices
              WHERE organization_id = ${organizationId} AND customer_id = ${balanceCustomer.id}) i
        WHERE k IN ('half', 'over', 'fee_paid', 'paid')`;
      // Credited in full: a credit note each, numbered after the history.
      await tx`
        INSERT INTO invoices (id, organization_id, type, status, number, customer_id, issue_date, net_oere, vat_oere, gross_oere,
                              credits_invoice_id, credit_reason, document_sha256, issued_at)
        SELECT gen_random_uuid(), ${organizationId}, 'creditNote', 'issued', ${base + n} + row_number() OVER (ORDER BY number),
               customer_id, issue_date, net_oere, vat_oere, gross_oere, id, 'Annulleret', ${doc.sha256}, now()
        FROM invoices
        WHERE organization_id = ${organizationId} AND customer_id = ${balanceCustomer.id} AND type = 'invoice'
          AND ${kindOfNumber} = 'credited'`;
      const [last] = await tx<{ used: number }[]>`SELECT max(number) AS used FROM invoices WHERE organization_id = ${organizationId}`;
      const used = last!.used;

      // The registration targets: large open invoices (100 million kr), so 100 øre payments never settle one.
      const open = await tx<{ id: string }[]>`
        INSERT INTO invoices (id, organization_id, type, status, number, customer_id, issue_date, due_date, payment_terms_days,
                              net_oere, vat_oere, gross_oere, document_sha256, issued_at)
        SELECT gen_random_uuid(), ${organizationId}, 'invoice', 'issued', ${used} + g,
               (${payers}::uuid[])[1 + g % ${payers.length}], ${today}::date - 1, ${today}::date + 30, 30,
               10000000000, 0, 10000000000, ${doc.sha256}, now()
        FROM generate_series(1, ${opts.openInvoices}) AS g
        RETURNING id`;
      await tx`
        INSERT INTO invoice_lines (organization_id, invoice_id, position, description, quantity, unit_price_oere, vat_rate_bps, vat_exemption_reason,
                                   discount_oere, net_oere, vat_oere, gross_oere)
        SELECT organization_id, id, 0, 'Anlægsarbejde', 1, gross_oere, 0, 'ML13', 0, gross_oere, 0, gross_oere
        FROM invoices WHERE organization_id = ${organizationId} AND id IN ${tx(open.map((o) => o.id))}`;
      await tx`UPDATE number_series SET next_number = ${used + opts.openInvoices + 1} WHERE organization_id = ${organizationId}`;
      return open.map((o) => o.id);
    });
    await db.sql.unsafe('VACUUM ANALYZE invoices, invoice_lines, payments, invoice_fees');
    return {
      balanceCustomerId: balanceCustomer.id,
      balanceInvoices: opts.balanceInvoices,
      openInvoiceIds,
      expected: expectedFigures(opts.balanceInvoices),
    };
  } finally {
    await db.close();
  }
}

/**
 * One registration request: a random open invoice (or the given one: the checks before the load each take their own,
 * so each knows what its invoice has been paid), 100 øre paid yesterday, a key never used before.
 */
export function paymentRequest(seed: PaymentsSeed, runId: string, n: number, invoiceIndex?: number): { path: string; key: string; body: string } {
  const invoiceId = seed.openInvoiceIds[invoiceIndex ?? Math.floor(Math.random() * seed.openInvoiceIds.length)]!;
  return {
    path: `/v1/invoices/${invoiceId}/payments`,
    key: `bench-pay-${runId}-${n}`,
    body: JSON.stringify({ amountOere: 100, paymentDate: addDays(copenhagenToday(new Date()), -1) }),
  };
}
