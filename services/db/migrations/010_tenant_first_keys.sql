-- The tables the API lists (customers, products, payments, invoices and credit notes, events) are keyed by
-- (organization_id, id), with no index that leads with id alone.
--
-- A list reads one organisation's newest rows: WHERE organization_id = $1 ORDER BY id DESC LIMIT n. With a primary
-- key on id alone, PostgreSQL can answer that by walking the id index backwards and filtering on the organisation,
-- and it does whenever its statistics make the organisation look like most of the table: one large tenant, or
-- statistics taken before another tenant's bulk import. Every row newer than the organisation's own newest is then
-- read and thrown away: seen at 20 000 rows removed by the filter and 4–10 ms for a 50-row page that takes 0.05 ms
-- through (organization_id, id), and the bench's customer list fell from 0.10 to 0.03 × S after another
-- organisation had created 12 000 newer customers. Without an id-only index the only ordered path is the
-- organisation's own range (test/db/list-plans.test.ts).
--
-- Every query on these tables names the organisation (tenant isolation), and every foreign key into them names it
-- too, so nothing needs the id-only index. Ids stay globally unique in practice (UUIDv7, 74 random bits); it is
-- enforced within an organisation.
--
-- Apply it with the services stopped (npm start migrates before it starts them): code from before it writes invoice
-- lines and provider events without their organisation, and the migration locks these tables while it rebuilds
-- their keys.
ALTER TABLE customers DROP CONSTRAINT customers_pkey;
ALTER TABLE customers ADD CONSTRAINT customers_pkey PRIMARY KEY USING INDEX customers_org_id;

ALTER TABLE products DROP CONSTRAINT products_pkey;
DROP INDEX products_org_id;
ALTER TABLE products ADD CONSTRAINT products_pkey PRIMARY KEY (organization_id, id);

-- Payments likewise (GET /v1/payments, newest first). What points at a payment now points with its organisation:
-- checkout sessions and receipt requests had the column already; a provider's event gets it from its checkout
-- session (an event that matched no session has neither, and books nothing).
ALTER TABLE checkout_sessions DROP CONSTRAINT checkout_sessions_payment_id_fkey;
ALTER TABLE payment_receipts DROP CONSTRAINT payment_receipts_payment_id_fkey;
ALTER TABLE provider_events DROP CONSTRAINT provider_events_payment_id_fkey;
ALTER TABLE payments DROP CONSTRAINT payments_pkey;
DROP INDEX payments_org_id;
ALTER TABLE payments ADD CONSTRAINT payments_pkey PRIMARY KEY (organization_id, id);
ALTER TABLE checkout_sessions ADD CONSTRAINT checkout_sessions_payment_fkey
  FOREIGN KEY (organization_id, payment_id) REFERENCES payments (organization_id, id);
ALTER TABLE payment_receipts ADD CONSTRAINT payment_receipts_payment_fkey
  FOREIGN KEY (organization_id, payment_id) REFERENCES payments (organization_id, id);
ALTER TABLE provider_events ADD COLUMN organization_id uuid REFERENCES organizations (id);
UPDATE provider_events e SET organization_id = s.organization_id FROM checkout_sessions s WHERE s.id = e.checkout_session_id;
ALTER TABLE provider_events ADD CONSTRAINT provider_events_session_org CHECK ((checkout_session_id IS NULL) = (organization_id IS NULL));
-- The composite key is checked only when both columns are set: a payment is only ever recorded with its organisation.
ALTER TABLE provider_events ADD CONSTRAINT provider_events_payment_org CHECK (payment_id IS NULL OR organization_id IS NOT NULL);
ALTER TABLE provider_events ADD CONSTRAINT provider_events_payment_fkey
  FOREIGN KEY (organization_id, payment_id) REFERENCES payments (organization_id, id);

-- Invoices and credit notes likewise (GET /v1/invoices, GET /v1/creditnotes). Their lines get the organisation
-- column the other tables that point at an invoice have, so that every reference names the organisation.
ALTER TABLE invoice_lines ADD COLUMN organization_id uuid;
UPDATE invoice_lines l SET organization_id = i.organization_id FROM invoices i WHERE i.id = l.invoice_id;
ALTER TABLE invoice_lines ALTER COLUMN organization_id SET NOT NULL;
ALTER TABLE invoice_lines DROP CONSTRAINT invoice_lines_invoice_id_fkey;
ALTER TABLE invoice_sends DROP CONSTRAINT invoice_sends_invoice_id_fkey;
ALTER TABLE invoice_issues DROP CONSTRAINT invoice_issues_invoice_id_fkey;
ALTER TABLE invoice_timeline DROP CONSTRAINT invoice_timeline_invoice_id_fkey;
ALTER TABLE invoices DROP CONSTRAINT invoices_credits_invoice_id_fkey;
ALTER TABLE invoices DROP CONSTRAINT invoices_pkey;
ALTER TABLE invoices ADD CONSTRAINT invoices_pkey PRIMARY KEY USING INDEX invoices_org_id;
ALTER TABLE invoice_lines ADD CONSTRAINT invoice_lines_invoice_fkey
  FOREIGN KEY (organization_id, invoice_id) REFERENCES invoices (organization_id, id) ON DELETE CASCADE;
ALTER TABLE invoice_sends ADD CONSTRAINT invoice_sends_invoice_fkey
  FOREIGN KEY (organization_id, invoice_id) REFERENCES invoices (organization_id, id);
ALTER TABLE invoice_issues ADD CONSTRAINT invoice_issues_invoice_fkey
  FOREIGN KEY (organization_id, invoice_id) REFERENCES invoices (organization_id, id);
ALTER TABLE invoice_timeline ADD CONSTRAINT invoice_timeline_invoice_fkey
  FOREIGN KEY (organization_id, invoice_id) REFERENCES invoices (organization_id, id) ON DELETE CASCADE;
ALTER TABLE invoices ADD CONSTRAINT invoices_credits_invoice_fkey
  FOREIGN KEY (organization_id, credits_invoice_id) REFERENCES invoices (organization_id, id);

-- Events likewise (GET /v1/events reads forwards from a cursor: the same walk, through other organisations' rows
-- after it). The outbox and webhook deliveries point at an event with its organisation.
ALTER TABLE event_outbox DROP CONSTRAINT event_outbox_event_id_fkey;
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_event_id_fkey;
ALTER TABLE events DROP CONSTRAINT events_pkey;
DROP INDEX events_org_id;
ALTER TABLE events ADD CONSTRAINT events_pkey PRIMARY KEY (organization_id, id);
ALTER TABLE event_outbox ADD CONSTRAINT event_outbox_event_fkey
  FOREIGN KEY (organization_id, event_id) REFERENCES events (organization_id, id);
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_event_fkey
  FOREIGN KEY (organization_id, event_id) REFERENCES events (organization_id, id);
