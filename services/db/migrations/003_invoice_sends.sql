-- One send per invoice: a second send replays the first result instead of mailing again. The row is written in the
-- API's transaction (status queued, or failed for want of an address); the mail workflow moves it on.
CREATE TABLE invoice_sends (
  invoice_id       uuid PRIMARY KEY REFERENCES invoices (id),
  organization_id  uuid NOT NULL REFERENCES organizations (id),
  status           text NOT NULL CHECK (status IN ('queued', 'sent', 'delivered', 'failed')),
  failure_code     text,
  -- Chosen once, so every retry of the delivery carries the same Message-ID.
  message_id       text NOT NULL,
  attempts         integer NOT NULL DEFAULT 0,
  last_error       text,
  requested_at     timestamptz NOT NULL DEFAULT now(),
  sent_at          timestamptz,
  CHECK ((status = 'failed') = (failure_code IS NOT NULL))
);
CREATE INDEX invoice_sends_queued ON invoice_sends (requested_at) WHERE status = 'queued';
