-- Subscriptions (docs/api-conventions.md, "Subscriptions"): a customer billed in advance, one invoice per period. The
-- period arithmetic is services/subscriptions/period-math.ts; the lifecycle services/subscriptions/subscription-lifecycle.ts:
--   active ⇄ paused; active or paused → cancelled (final; also how a subscription ends, with ended_at set).
--
-- Period k ≥ anchor_period starts on anchor_date + (k − anchor_period) × interval. A subscription that never
-- changed its interval has the anchor (start_date, 0); a PATCH with a new interval moves it to (the next period's
-- start, next_period), so later periods follow the new interval from there.
CREATE TABLE subscriptions (
  organization_id     uuid NOT NULL REFERENCES organizations (id),
  id                  uuid NOT NULL,
  customer_id         uuid NOT NULL,
  name                text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 120),
  interval_unit       text NOT NULL CHECK (interval_unit IN ('week', 'month', 'year')),
  interval_count      integer NOT NULL CHECK (interval_count BETWEEN 1 AND 24),
  start_date          date NOT NULL,
  end_date            date CHECK (end_date IS NULL OR end_date >= start_date),
  due_days            integer NOT NULL CHECK (due_days BETWEEN 0 AND 365),
  auto_send           boolean NOT NULL,
  -- The lines as given (vatRateBps filled in), an array of 1..50 objects: copied onto each period's invoice.
  lines               jsonb NOT NULL CHECK (jsonb_typeof(lines) = 'array' AND jsonb_array_length(lines) BETWEEN 1 AND 50),
  external_reference  text,
  metadata            jsonb,
  status              text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'paused', 'cancelled')),
  anchor_date         date NOT NULL,
  anchor_period       integer NOT NULL CHECK (anchor_period >= 0),
  -- The next period to invoice: every period before it has a run receipt or was skipped by a pause.
  next_period         integer NOT NULL CHECK (next_period >= anchor_period),
  -- The start of next_period while active and that period comes; NULL while paused, cancelled or ended. Stored so
  -- that the nextInvoiceBefore filter and the schedule can read it; written with next_period, never apart.
  next_invoice_date   date,
  -- When the current pause began (NULL unless paused).
  paused_at           timestamptz,
  -- Cancelled by POST …/cancel; ended_at instead when the last period was invoiced or endDate passed.
  cancelled_at        timestamptz,
  ended_at            timestamptz,
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, id),
  FOREIGN KEY (organization_id, customer_id) REFERENCES customers (organization_id, id),
  CHECK ((status = 'paused') = (paused_at IS NOT NULL)),
  CHECK ((status = 'cancelled') = (cancelled_at IS NOT NULL OR ended_at IS NOT NULL)),
  CHECK (cancelled_at IS NULL OR ended_at IS NULL),
  CHECK (status = 'active' OR next_invoice_date IS NULL)
);
-- The list's filters, each within the organisation's own range (tenant first, as 010_tenant_first_keys.sql).
CREATE INDEX subscriptions_org_customer ON subscriptions (organization_id, customer_id, id);
CREATE INDEX subscriptions_org_reference ON subscriptions (organization_id, external_reference, id)
  WHERE external_reference IS NOT NULL;
CREATE INDEX subscriptions_org_next_invoice ON subscriptions (organization_id, next_invoice_date)
  WHERE next_invoice_date IS NOT NULL;

-- Invoices made by a subscription name it and their period; NULL for every other invoice and credit note.
ALTER TABLE invoices ADD COLUMN subscription_id uuid;
ALTER TABLE invoices ADD COLUMN period_start date;
ALTER TABLE invoices ADD COLUMN period_end date;
ALTER TABLE invoices ADD CONSTRAINT invoices_subscription_fkey
  FOREIGN KEY (organization_id, subscription_id) REFERENCES subscriptions (organization_id, id);
ALTER TABLE invoices ADD CONSTRAINT invoices_subscription_period CHECK (
  (subscription_id IS NULL AND period_start IS NULL AND period_end IS NULL)
  OR (subscription_id IS NOT NULL AND period_start IS NOT NULL AND period_end >= period_start));
-- One invoice per period, also at the invoice (GET …/invoices reads this range, newest period first).
CREATE UNIQUE INDEX invoices_subscription_period ON invoices (organization_id, subscription_id, period_start)
  WHERE subscription_id IS NOT NULL;

-- The per-period run receipt: written by the run in the transaction that issues the period's invoice. Its key makes
-- a second invoice for one period impossible (a manual run racing the schedule, a retry, a crash and a rerun).
CREATE TABLE subscription_runs (
  organization_id  uuid NOT NULL,
  subscription_id  uuid NOT NULL,
  period_index     integer NOT NULL CHECK (period_index >= 0),
  period_start     date NOT NULL,
  period_end       date NOT NULL CHECK (period_end >= period_start),
  invoice_id       uuid NOT NULL,
  created_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, subscription_id, period_start),
  UNIQUE (organization_id, subscription_id, period_index),
  UNIQUE (organization_id, invoice_id),
  FOREIGN KEY (organization_id, subscription_id) REFERENCES subscriptions (organization_id, id),
  FOREIGN KEY (organization_id, invoice_id) REFERENCES invoices (organization_id, id)
);
