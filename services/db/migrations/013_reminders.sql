-- Reminders (rykkere): the organisation's reminder settings, every reminder step taken on an invoice, and what the
-- dunning engine needs to decide fees over a customer's continuous arrears (docs/reminders.md).

-- The organisation's reminder settings. No row: the defaults (maxReminders 3, statutory fee, cadence 7/14/21 days
-- after due, no automatic collection, no payment reminder (3 days), no letter fallback).
CREATE TABLE reminder_settings (
  organization_id           uuid PRIMARY KEY REFERENCES organizations (id),
  max_reminders             integer NOT NULL CHECK (max_reminders BETWEEN 0 AND 3),
  -- NULL: the statutory cap (10 000 øre, Renteloven § 9 b).
  fee_oere                  bigint CHECK (fee_oere BETWEEN 0 AND 10000),
  -- daysAfterDue of reminders 1, 2 and 3, strictly increasing.
  cadence_days              integer[] NOT NULL CHECK (
    cardinality(cadence_days) = 3 AND cadence_days[1] BETWEEN 1 AND 365 AND cadence_days[2] BETWEEN 1 AND 365
    AND cadence_days[3] BETWEEN 1 AND 365 AND cadence_days[1] < cadence_days[2] AND cadence_days[2] < cadence_days[3]),
  auto_collections          boolean NOT NULL,
  payment_reminder_enabled  boolean NOT NULL,
  payment_reminder_days     integer NOT NULL CHECK (payment_reminder_days BETWEEN 1 AND 365),
  letter_fallback           boolean NOT NULL,
  updated_at                timestamptz NOT NULL DEFAULT now(),
  CHECK (NOT payment_reminder_enabled OR payment_reminder_days < cadence_days[1])
);

-- One row per reminder step taken on an invoice, automatic or manual. A step is taken once: the unique indexes
-- refuse a second reminder with the same number (or a second payment reminder) however the engine and an ad-hoc
-- request race. The fee, when there is one, is the invoice_fees row written in the same transaction.
--
-- `sent_on` is the business date the step was taken on (its planned date when the engine catches up after a clock
-- advance), `deadline` the new payment deadline it gives (sent_on + 10 days). The document and the delivery follow
-- after commit: `delivery` is pending until the mail or letter is handed over (or fails for good).
CREATE TABLE reminders (
  id               uuid PRIMARY KEY,
  organization_id  uuid NOT NULL REFERENCES organizations (id),
  invoice_id       uuid NOT NULL,
  customer_id      uuid NOT NULL,
  type             text NOT NULL CHECK (type IN ('payment_reminder', 'reminder')),
  reminder_number  integer CHECK (reminder_number BETWEEN 1 AND 3),
  fee_oere         bigint NOT NULL CHECK (fee_oere BETWEEN 0 AND 10000),
  fee_id           uuid REFERENCES invoice_fees (id),
  -- The channel chosen when the step was taken; NULL when there was none (failed: customer_email_missing, …).
  channel          text CHECK (channel IN ('email', 'letter')),
  status           text NOT NULL CHECK (status IN ('sent', 'failed')),
  failure_code     text CHECK (length(failure_code) BETWEEN 1 AND 60),
  demand_letter    boolean NOT NULL DEFAULT false,
  source           text NOT NULL CHECK (source IN ('automatic', 'manual')),
  sent_on          date NOT NULL,
  sent_at          timestamptz NOT NULL,
  deadline         date NOT NULL,
  -- After commit: the PDF (write-once store), then the mail or letter.
  document_sha256  bytea CHECK (length(document_sha256) = 32),
  language         text CHECK (language IN ('da', 'en')),
  delivery         text NOT NULL CHECK (delivery IN ('pending', 'done', 'none')),
  message_id       text,
  delivered_at     timestamptz,
  delivery_error   text CHECK (length(delivery_error) <= 1000),
  created_at       timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (organization_id, invoice_id) REFERENCES invoices (organization_id, id),
  FOREIGN KEY (organization_id, customer_id) REFERENCES customers (organization_id, id),
  CHECK ((type = 'payment_reminder') = (reminder_number IS NULL)),
  CHECK (type = 'reminder' OR fee_oere = 0),
  CHECK ((status = 'failed') = (failure_code IS NOT NULL)),
  CHECK ((fee_oere > 0) = (fee_id IS NOT NULL)),
  CHECK (delivery <> 'pending' OR status = 'sent')
);
CREATE UNIQUE INDEX reminders_numbered_once ON reminders (invoice_id, reminder_number) WHERE type = 'reminder';
CREATE UNIQUE INDEX reminders_payment_reminder_once ON reminders (invoice_id) WHERE type = 'payment_reminder';
-- The history of one invoice, oldest first.
CREATE INDEX reminders_invoice ON reminders (organization_id, invoice_id, sent_on, id);
-- Fee-bearing reminders of a customer since the start of their continuous arrears.
CREATE INDEX reminders_customer_fees ON reminders (organization_id, customer_id, sent_on) WHERE fee_oere > 0;

-- The business date an invoice's balance first reached 0 or less (a payment in full, a credit): the end of its
-- overdue interval, from which the engine finds where a customer's continuous arrears began.
ALTER TABLE invoices ADD COLUMN settled_on date;
-- After the last reminder of the plan (docs/reminders.md, "The plan"): the invoice is ready for collection.
ALTER TABLE invoices ADD COLUMN collections_ready boolean NOT NULL DEFAULT false;
-- Invoices settled before this column existed: the date they were last changed (their settling payment or credit).
UPDATE invoices SET settled_on = (updated_at AT TIME ZONE 'Europe/Copenhagen')::date WHERE status = 'paid';
