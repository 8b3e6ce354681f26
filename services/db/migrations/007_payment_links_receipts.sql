-- Payment links and the hosted pay page's checkout sessions, the payment providers' callbacks, and receipts.

-- One link per invoice, created on first request and never changed: the same reference, code and URL whenever it
-- is asked for. `reference` is 128 random bits as 32 lowercase hex characters (the link's path); `payment_code` is
-- 40 random bits as 8 Crockford base32 characters (typed by a person on the pay page; stored without the hyphen).
CREATE TABLE payment_links (
  invoice_id       uuid PRIMARY KEY,
  organization_id  uuid NOT NULL REFERENCES organizations (id),
  reference        text NOT NULL UNIQUE CHECK (reference ~ '^[0-9a-f]{32}$'),
  payment_code     text NOT NULL UNIQUE CHECK (payment_code ~ '^[0-9A-HJKMNP-TV-Z]{8}$'),
  created_at       timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (organization_id, invoice_id) REFERENCES invoices (organization_id, id)
);

-- A checkout the pay page opened with a payment provider, always for the invoice's balance at that moment. The
-- provider echoes our id in its callbacks. The status only moves forward (open → failed → succeeded; succeeded is
-- final), so callbacks arriving late or out of order can never undo a payment.
CREATE TABLE checkout_sessions (
  id                   uuid PRIMARY KEY,
  organization_id      uuid NOT NULL REFERENCES organizations (id),
  invoice_id           uuid NOT NULL,
  provider             text NOT NULL,
  method               text NOT NULL CHECK (method IN ('card', 'mobilepay')),
  amount_oere          bigint NOT NULL CHECK (amount_oere > 0),
  language             text NOT NULL CHECK (language IN ('da', 'en')),
  status               text NOT NULL CHECK (status IN ('open', 'failed', 'succeeded')),
  provider_session_id  text,
  checkout_url         text,
  expires_at           timestamptz,
  -- The payment the provider reported for this session, booked once on the provider's payment id.
  payment_id           uuid REFERENCES payments (id),
  failure_reason       text,
  created_at           timestamptz NOT NULL DEFAULT now(),
  updated_at           timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (organization_id, invoice_id) REFERENCES invoices (organization_id, id),
  CHECK ((status = 'succeeded') = (payment_id IS NOT NULL))
);
CREATE INDEX checkout_sessions_invoice ON checkout_sessions (organization_id, invoice_id, created_at);

-- Every verified provider callback, once: a redelivered event (same provider event id) changes nothing. Kept as
-- the record of what each provider told the service.
CREATE TABLE provider_events (
  provider             text NOT NULL,
  event_id             text NOT NULL CHECK (length(event_id) BETWEEN 1 AND 200),
  type                 text NOT NULL,
  checkout_session_id  uuid REFERENCES checkout_sessions (id),
  provider_payment_id  text,
  -- What the event did: booked a payment, recorded a failure, or nothing (a stale or repeated state).
  effect               text NOT NULL CHECK (effect IN ('booked', 'already_booked', 'failed', 'stale', 'ignored')),
  payment_id           uuid REFERENCES payments (id),
  occurred_at          timestamptz,
  received_at          timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (provider, event_id)
);

-- The receipt of each payment: requested in the transaction that books the payment (by the trigger below, so every
-- channel gets one), rendered afterwards by the PaymentReceipt workflow and then fixed. The PDF itself lives in the
-- write-once `documents` table; this row only points at it, once.
CREATE TABLE payment_receipts (
  payment_id       uuid PRIMARY KEY REFERENCES payments (id),
  organization_id  uuid NOT NULL REFERENCES organizations (id),
  requested_at     timestamptz NOT NULL DEFAULT now(),
  document_sha256  bytea CHECK (length(document_sha256) = 32),
  language         text CHECK (language IN ('da', 'en')),
  rendered_at      timestamptz,
  CHECK ((document_sha256 IS NULL) = (rendered_at IS NULL))
);
-- The workflows process's sweep: receipts whose hand-off to the engine was lost.
CREATE INDEX payment_receipts_pending ON payment_receipts (requested_at) WHERE document_sha256 IS NULL;

CREATE FUNCTION payment_receipt_requested() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO payment_receipts (payment_id, organization_id) VALUES (NEW.id, NEW.organization_id);
  RETURN NULL;
END $$;
CREATE TRIGGER payments_request_receipt AFTER INSERT ON payments FOR EACH ROW EXECUTE FUNCTION payment_receipt_requested();

-- A rendered receipt is fixed: its document is set once and the row is never changed or removed afterwards.
CREATE FUNCTION payment_receipts_write_once() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND OLD.document_sha256 IS NULL THEN
    IF NEW.payment_id <> OLD.payment_id OR NEW.organization_id <> OLD.organization_id OR NEW.requested_at <> OLD.requested_at THEN
      RAISE EXCEPTION 'a receipt request cannot be moved' USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN NEW;
  END IF;
  RAISE EXCEPTION 'receipts are write-once: % is not allowed', TG_OP USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER payment_receipts_fixed BEFORE UPDATE OR DELETE ON payment_receipts FOR EACH ROW EXECUTE FUNCTION payment_receipts_write_once();
CREATE TRIGGER payment_receipts_no_truncate BEFORE TRUNCATE ON payment_receipts FOR EACH STATEMENT EXECUTE FUNCTION payment_receipts_write_once();
