import assert from 'node:assert/strict';
import { createTestOrg, testDb } from '../helpers/context.ts';
import { uuidv7 } from '../../services/shared/ids.ts';

/**
 * Rows that point at an invoice, a payment or an event name its organisation, and the database holds them to it
 * (migration 010): a row that names another organisation's invoice, payment or event is refused, and a provider's
 * event carries a payment only together with its organisation.
 */
describe('references name their organisation', () => {
  const db = () => testDb().db;
  let a: string;
  let b: string;
  let invoiceId: string;
  let paymentId: string;
  let eventId: string;

  before(async () => {
    a = (await createTestOrg()).organizationId;
    b = (await createTestOrg()).organizationId;
    const customerId = uuidv7();
    invoiceId = uuidv7();
    paymentId = uuidv7();
    eventId = uuidv7();
    await db().sql`INSERT INTO customers (id, organization_id, type, name) VALUES (${customerId}, ${a}, 'company', 'Kunde A/S')`;
    await db().sql`
      INSERT INTO invoices (id, organization_id, type, status, number, customer_id, issue_date, due_date, net_oere, vat_oere, gross_oere, document_sha256)
      VALUES (${invoiceId}, ${a}, 'invoice', 'issued', 1, ${customerId}, current_date, current_date + 14, 10000, 0, 10000, ${Buffer.alloc(32, 1)})`;
    await db().sql`
      INSERT INTO payments (id, organization_id, invoice_id, customer_id, source, booking_key, amount_oere, payment_date, outcome, surplus_oere)
      VALUES (${paymentId}, ${a}, ${invoiceId}, ${customerId}, 'card', 'pi_tenant_keys', 100, current_date, 'partial', 0)`;
    await db().sql`
      INSERT INTO events (id, organization_id, type, entity_family, entity_id, sekvensnummer, data)
      VALUES (${eventId}, ${a}, 'payment.received', 'payment', ${paymentId}, 1, '{}')`;
  });

  /** The SQLSTATE the statement fails with. */
  const failure = (statement: Promise<unknown>) => statement.then(() => 'no error', (err: { code?: string }) => err.code);

  it("refuses an invoice line, a timeline entry and an outbox row that name another organisation's invoice or event", async () => {
    const line = (org: string) => db().sql`
      INSERT INTO invoice_lines (organization_id, invoice_id, position, description, quantity, unit_price_oere, vat_rate_bps,
                                 vat_exemption_reason, discount_oere, net_oere, vat_oere, gross_oere)
      VALUES (${org}, ${invoiceId}, 0, 'Vare', 1, 10000, 0, 'ML13', 0, 10000, 0, 10000)`;
    assert.equal(await failure(line(b)), '23503');
    assert.equal(await failure(db().sql`INSERT INTO invoice_timeline (id, organization_id, invoice_id, code, data) VALUES (${uuidv7()}, ${b}, ${invoiceId}, 'sent', '{}')`), '23503');
    assert.equal(await failure(db().sql`INSERT INTO event_outbox (event_id, organization_id) VALUES (${eventId}, ${b})`), '23503');
    // The same rows with their own organisation are taken.
    assert.equal(await failure(line(a)), 'no error');
  });

  it("refuses a provider event whose payment is another organisation's, or has no organisation", async () => {
    const providerEvent = (org: string | null, sessionId: string | null) => db().sql`
      INSERT INTO provider_events (provider, event_id, type, checkout_session_id, organization_id, provider_payment_id, effect, payment_id)
      VALUES ('test', ${`evt_${uuidv7()}`}, 'payment_succeeded', ${sessionId}, ${org}, 'pi_tenant_keys', 'booked', ${paymentId})`;
    const sessionId = uuidv7();
    await db().sql`
      INSERT INTO checkout_sessions (id, organization_id, invoice_id, provider, method, amount_oere, language, status)
      VALUES (${sessionId}, ${a}, ${invoiceId}, 'test', 'card', 100, 'da', 'open')`;
    assert.equal(await failure(providerEvent(null, null)), '23514');
    assert.equal(await failure(providerEvent(b, sessionId)), '23503');
    assert.equal(await failure(providerEvent(a, sessionId)), 'no error');
  });
});
