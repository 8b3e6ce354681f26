-- Issuing in two steps. A short transaction takes the number under the series lock and freezes the invoice
-- (status 'issuing', number, dates and party snapshots); the PDF is rendered outside any transaction; a second
-- transaction stores it, marks the invoice issued and writes the event, the timeline and the request's idempotent
-- response. Between the two, this row says what is left to do and for which request, so whoever finishes the issue
-- (the request itself, its retry, or the workflows process's sweep after a crash) answers exactly as the request
-- would have. A reserved number is never given back: every reservation is finished, so the series has no gap.
CREATE TABLE invoice_issues (
  invoice_id        uuid PRIMARY KEY REFERENCES invoices (id),
  organization_id   uuid NOT NULL REFERENCES organizations (id),
  -- The request that reserved the number; its response is stored under this key when the issue finishes.
  idempotency_key   text NOT NULL,
  request_hash      bytea NOT NULL,
  response_status   integer NOT NULL,
  response_location text,
  -- send=true on create: the finishing transaction also queues the mail.
  send              boolean NOT NULL DEFAULT false,
  -- The document language chosen at reservation (the customer's), so a later finish renders the same document.
  language          text NOT NULL CHECK (language IN ('da', 'en')),
  reserved_at       timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX invoice_issues_key ON invoice_issues (organization_id, idempotency_key);
CREATE INDEX invoice_issues_reserved_at ON invoice_issues (reserved_at);
