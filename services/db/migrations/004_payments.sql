-- Payments (money in, from every channel), fees added to an invoice's balance, and the indexes that keep the
-- computed balances (gross + reminder fees − paid − credited, never stored) fast for a customer with a
-- long history.

-- One row per booked payment. A payment is booked on its booking key, unique per organisation and channel: the
-- Idempotency-Key of a manual registration, the provider's payment id of a card or mobile-wallet payment. The key lives
-- as long as the payment, so a retry books nothing twice however late it comes (docs/api-conventions.md, "Payments and
-- balances"), even after the stored idempotent response has expired. Payments are never changed or removed.
CREATE TABLE payments (
  id               uuid PRIMARY KEY,
  organization_id  uuid NOT NULL REFERENCES organizations (id),
  invoice_id       uuid NOT NULL,
  -- The invoice's customer, copied at booking (an issued invoice's customer never changes), so a customer's balance
  -- finds the payments that left a surplus in one index range.
  customer_id      uuid NOT NULL,
  source           text NOT NULL CHECK (source IN ('manual', 'card', 'mobilepay')),
  booking_key      text NOT NULL CHECK (length(booking_key) BETWEEN 1 AND 200),
  amount_oere      bigint NOT NULL CHECK (amount_oere > 0),
  payment_date     date NOT NULL,
  -- What the payment did to the invoice when it was booked (docs/api-conventions.md, "Payments and balances",
  -- Outcomes), and the part of it
  -- beyond the invoice's balance at that moment, which the customer holds as credit.
  outcome          text NOT NULL CHECK (outcome IN ('partial', 'paid_in_full', 'registered')),
  surplus_oere     bigint NOT NULL CHECK (surplus_oere BETWEEN 0 AND amount_oere),
  created_at       timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (organization_id, invoice_id) REFERENCES invoices (organization_id, id),
  FOREIGN KEY (organization_id, customer_id) REFERENCES customers (organization_id, id),
  -- Only `registered` leaves a surplus: the invoice was settled already, or the payment went beyond its balance.
  CHECK ((outcome = 'registered') = (surplus_oere > 0))
);
CREATE UNIQUE INDEX payments_booking_key ON payments (organization_id, source, booking_key);
CREATE FUNCTION payments_fixed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'payments are never changed or removed: % is not allowed', TG_OP USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER payments_no_change BEFORE UPDATE OR DELETE ON payments FOR EACH ROW EXECUTE FUNCTION payments_fixed();
CREATE TRIGGER payments_no_truncate BEFORE TRUNCATE ON payments FOR EACH STATEMENT EXECUTE FUNCTION payments_fixed();
-- GET /v1/payments (newest first) and GET /v1/invoices/{id}/payments with each invoice's paid sum.
CREATE INDEX payments_org_id ON payments (organization_id, id);
CREATE INDEX payments_invoice ON payments (organization_id, invoice_id, id) INCLUDE (amount_oere);

-- Amounts added to an invoice's balance after issue. Today the only kind is the reminder fee (rykkergebyr), written
-- by the reminder engine in the transaction that sends a fee-bearing reminder; the invoice's reminderFeeOere is
-- their sum.
CREATE TABLE invoice_fees (
  id               uuid PRIMARY KEY,
  organization_id  uuid NOT NULL REFERENCES organizations (id),
  invoice_id       uuid NOT NULL,
  customer_id      uuid NOT NULL,
  kind             text NOT NULL CHECK (kind IN ('reminder')),
  amount_oere      bigint NOT NULL CHECK (amount_oere > 0),
  created_at       timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (organization_id, invoice_id) REFERENCES invoices (organization_id, id),
  FOREIGN KEY (organization_id, customer_id) REFERENCES customers (organization_id, id)
);
CREATE INDEX invoice_fees_invoice ON invoice_fees (organization_id, invoice_id) INCLUDE (kind, amount_oere);
-- The customer balance: a customer's fees from one range.
CREATE INDEX invoice_fees_customer ON invoice_fees (organization_id, customer_id) INCLUDE (invoice_id, kind, amount_oere);

-- A fee is charged on an open invoice only, never on one that is settled (paid) or not issued. The invoice row is
-- locked for share, so a fee and a payment on one invoice are serialised: a payment booked after the fee sees it in
-- the balance, and a fee after the settling payment is refused. The customer balance relies on this: a `paid`
-- invoice's balance can then only fall below 0 through a payment's surplus or a credit note.
CREATE FUNCTION invoice_fees_on_open_invoice() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  invoice_status text;
BEGIN
  SELECT status INTO invoice_status FROM invoices
  WHERE organization_id = NEW.organization_id AND id = NEW.invoice_id AND customer_id = NEW.customer_id AND type = 'invoice'
  FOR SHARE;
  IF invoice_status IS NULL OR invoice_status NOT IN ('issued', 'overdue', 'collections') THEN
    RAISE EXCEPTION 'a fee can only be added to an open invoice of its customer (invoice %, status %)', NEW.invoice_id, invoice_status
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER invoice_fees_open_only BEFORE INSERT ON invoice_fees FOR EACH ROW EXECUTE FUNCTION invoice_fees_on_open_invoice();
CREATE FUNCTION invoice_fees_fixed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'fees are never changed or removed: % is not allowed', TG_OP USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER invoice_fees_no_change BEFORE UPDATE OR DELETE ON invoice_fees FOR EACH ROW EXECUTE FUNCTION invoice_fees_fixed();
CREATE TRIGGER invoice_fees_no_truncate BEFORE TRUNCATE ON invoice_fees FOR EACH STATEMENT EXECUTE FUNCTION invoice_fees_fixed();

-- The customer balance computes the balance of the invoices that can have one other than 0 (see
-- services/customers/balance-queries.ts): open invoices, invoices with a payment that left a surplus, credited
-- invoices. Each of these small partial indexes yields one kind of them for a customer.
CREATE INDEX invoices_customer_open ON invoices (organization_id, customer_id) INCLUDE (id, status, due_date, gross_oere)
  WHERE type = 'invoice' AND status IN ('issued', 'overdue', 'collections');
CREATE INDEX invoices_customer_credit_notes ON invoices (organization_id, customer_id) INCLUDE (credits_invoice_id, status, gross_oere)
  WHERE type = 'creditNote';
CREATE INDEX payments_customer_surplus ON payments (organization_id, customer_id) INCLUDE (invoice_id) WHERE surplus_oere > 0;
-- GET /v1/customers?pastDue=…: the organisation's open invoices past their due date.
CREATE INDEX invoices_open_by_due_date ON invoices (organization_id, due_date) INCLUDE (customer_id, gross_oere)
  WHERE type = 'invoice' AND status IN ('issued', 'overdue', 'collections');
