-- Bank statements (docs/bank-payments.md, "Bank statements (camt.053)"): one row per import of a camt.053 document,
-- one row per entry (or per transaction of a batch entry) it held, and the payments the matched entries booked.

-- A payment booked from a bank statement entry has its own channel, `bank`: its booking key is the entry's identity,
-- unique per organisation and channel like every booking key, so an entry never books twice however it is imported.
ALTER TABLE payments DROP CONSTRAINT payments_source_check;
ALTER TABLE payments ADD CONSTRAINT payments_source_check CHECK (source IN ('manual', 'card', 'mobilepay', 'bank'));

-- Keyed by (organization_id, id) like every listed table (010_tenant_first_keys.sql).
CREATE TABLE bank_statements (
  id               uuid NOT NULL,
  organization_id  uuid NOT NULL REFERENCES organizations (id),
  -- The account the statements are of, as the bank names it (the IBAN, else its other identification).
  account_id       text NOT NULL CHECK (length(account_id) BETWEEN 1 AND 70),
  -- The statements' own ids (Stmt/Id), in document order.
  statement_ids    text[] NOT NULL,
  -- The period the statements cover (FrToDt), else the first and last booking date; null for a document without either.
  from_date        date,
  to_date          date,
  -- The counts as imported: the entries' own statuses say what they are now.
  entry_count      integer NOT NULL CHECK (entry_count >= 0),
  created_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, id)
);

CREATE TABLE bank_statement_entries (
  id               uuid NOT NULL,
  organization_id  uuid NOT NULL REFERENCES organizations (id),
  statement_id     uuid NOT NULL,
  account_id       text NOT NULL,
  -- What the entry is across imports: AcctSvcrRef, else NtryRef, else the SHA-256 of its booking date, amount and
  -- remittance text, with the transaction's position for a batch entry split into its transactions.
  identity         text NOT NULL CHECK (length(identity) BETWEEN 1 AND 120),
  booking_date     date,
  -- Signed: a credit is positive, a debit negative; in hundredths of the entry's currency.
  amount_oere      bigint NOT NULL,
  currency         text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
  -- The structured creditor reference (RmtInf/Strd/CdtrRefInf/Ref), as given.
  reference        text CHECK (length(reference) <= 140),
  -- The remittance text (RmtInf/Ustrd, joined by newlines), encrypted: it is a person's words about their payment.
  remittance_enc   bytea,
  status           text NOT NULL CHECK (status IN ('matched', 'unmatched', 'duplicate', 'ignored')),
  invoice_id       uuid,
  payment_id       uuid,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, id),
  FOREIGN KEY (organization_id, statement_id) REFERENCES bank_statements (organization_id, id),
  FOREIGN KEY (organization_id, invoice_id) REFERENCES invoices (organization_id, id),
  FOREIGN KEY (organization_id, payment_id) REFERENCES payments (organization_id, id),
  -- A matched entry names its invoice and payment; no other entry does.
  CHECK ((status = 'matched') = (payment_id IS NOT NULL AND invoice_id IS NOT NULL)),
  CHECK (status = 'matched' OR (payment_id IS NULL AND invoice_id IS NULL))
);
-- The first sighting of an entry is the one that counts: one per organisation, account and identity. A later import
-- of the same entry inserts a `duplicate` row, which books nothing; two imports racing wait for each other here.
CREATE UNIQUE INDEX bank_statement_entries_identity ON bank_statement_entries (organization_id, account_id, identity)
  WHERE status <> 'duplicate';
-- GET /v1/bank-statements/{id}/entries, in document order, with or without a status filter.
CREATE INDEX bank_statement_entries_statement ON bank_statement_entries (organization_id, statement_id, id);
