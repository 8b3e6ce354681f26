-- Invoices and credit notes, their lines, the organisation's number series, write-once documents, the event log
-- and the invoice timeline.

-- One gap-free series per organisation, shared by invoices and credit notes. The row is locked by the transaction
-- that takes a number; a rolled-back issue gives its number back.
CREATE TABLE number_series (
  organization_id  uuid PRIMARY KEY REFERENCES organizations (id),
  next_number      bigint NOT NULL DEFAULT 1 CHECK (next_number >= 1)
);

CREATE TABLE invoices (
  id                    uuid PRIMARY KEY,
  organization_id       uuid NOT NULL REFERENCES organizations (id),
  type                  text NOT NULL CHECK (type IN ('invoice', 'creditNote')),
  -- 'issuing' holds a reserved number while the PDF is rendered; readers see it as a draft that cannot be edited.
  status                text NOT NULL CHECK (status IN ('draft', 'issuing', 'issued', 'overdue', 'paid', 'collections')),
  number                bigint,
  customer_id           uuid NOT NULL,
  issue_date            date,
  due_date              date,
  payment_terms_days    integer CHECK (payment_terms_days BETWEEN 0 AND 365),
  currency              text NOT NULL DEFAULT 'DKK' CHECK (currency = 'DKK'),
  net_oere              bigint NOT NULL,
  vat_oere              bigint NOT NULL,
  gross_oere            bigint NOT NULL,
  customer_reference    text,
  sender_reference      text,
  message               text,
  heading               text,
  external_reference    text,
  metadata              jsonb,
  credits_invoice_id    uuid REFERENCES invoices (id),
  credit_reason         text,
  -- Frozen at issue: what the document shows about seller and buyer, whatever changes later.
  seller_snapshot       jsonb,
  buyer_snapshot        jsonb,
  document_sha256       bytea,
  issued_at             timestamptz,
  sent_at               timestamptz,
  created_at            timestamptz NOT NULL DEFAULT now(),
  updated_at            timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (organization_id, customer_id) REFERENCES customers (organization_id, id),
  CHECK ((status = 'draft') = (number IS NULL)),
  CHECK (status IN ('draft', 'issuing') OR document_sha256 IS NOT NULL),
  CHECK ((type = 'creditNote') = (credits_invoice_id IS NOT NULL))
);
CREATE UNIQUE INDEX invoices_org_number ON invoices (organization_id, number) WHERE number IS NOT NULL;
CREATE UNIQUE INDEX invoices_org_id ON invoices (organization_id, id);
CREATE INDEX invoices_org_type_id ON invoices (organization_id, type, id);
CREATE INDEX invoices_org_customer ON invoices (organization_id, customer_id, id);
CREATE INDEX invoices_org_status ON invoices (organization_id, status, id);
CREATE INDEX invoices_org_extref ON invoices (organization_id, external_reference) WHERE external_reference IS NOT NULL;
-- Crediting is full and once per invoice.
CREATE UNIQUE INDEX invoices_credited_once ON invoices (credits_invoice_id) WHERE credits_invoice_id IS NOT NULL;

CREATE TABLE invoice_lines (
  invoice_id            uuid NOT NULL REFERENCES invoices (id) ON DELETE CASCADE,
  position              integer NOT NULL,
  description           text NOT NULL,
  -- Exact decimal as given; amounts are computed from it in integer arithmetic.
  quantity              numeric NOT NULL CHECK (quantity > 0),
  unit_price_oere       bigint NOT NULL,
  vat_rate_bps          integer NOT NULL,
  vat_exemption_reason  text,
  discount_type         text CHECK (discount_type IN ('percent', 'amount')),
  discount_value        bigint,
  discount_oere         bigint NOT NULL,
  account_id            text,
  unit                  text,
  product_id            uuid,
  net_oere              bigint NOT NULL,
  vat_oere              bigint NOT NULL,
  gross_oere            bigint NOT NULL,
  PRIMARY KEY (invoice_id, position)
);

-- Write-once document store (PDFs). Content-addressed by SHA-256; rows can be inserted, never changed or removed.
CREATE TABLE documents (
  sha256           bytea PRIMARY KEY CHECK (length(sha256) = 32),
  organization_id  uuid NOT NULL REFERENCES organizations (id),
  content_type     text NOT NULL,
  size_bytes       integer NOT NULL,
  content          bytea NOT NULL,
  created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE FUNCTION documents_write_once() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'documents are write-once: % is not allowed', TG_OP USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER documents_no_update BEFORE UPDATE OR DELETE ON documents FOR EACH ROW EXECUTE FUNCTION documents_write_once();
CREATE TRIGGER documents_no_truncate BEFORE TRUNCATE ON documents FOR EACH STATEMENT EXECUTE FUNCTION documents_write_once();

-- The event log: one row per event an integrator can receive, written in the transaction of the change it reports.
-- sekvensnummer counts 1, 2, 3… per entity without gaps.
CREATE TABLE events (
  id               uuid PRIMARY KEY,
  organization_id  uuid NOT NULL REFERENCES organizations (id),
  type             text NOT NULL,
  entity_family    text NOT NULL CHECK (entity_family IN ('invoice', 'payment', 'customer', 'subscription', 'sag')),
  entity_id        uuid NOT NULL,
  sekvensnummer    integer NOT NULL CHECK (sekvensnummer >= 1),
  occurred_at      timestamptz NOT NULL DEFAULT now(),
  data             jsonb NOT NULL,
  UNIQUE (entity_id, sekvensnummer)
);
CREATE INDEX events_org_id ON events (organization_id, id);

CREATE TABLE invoice_timeline (
  id               uuid PRIMARY KEY,
  organization_id  uuid NOT NULL,
  invoice_id       uuid NOT NULL REFERENCES invoices (id) ON DELETE CASCADE,
  code             text NOT NULL,
  at               timestamptz NOT NULL DEFAULT now(),
  data             jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX invoice_timeline_invoice ON invoice_timeline (organization_id, invoice_id, at, id);
