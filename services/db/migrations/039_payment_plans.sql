-- Payment plans (docs/reminders.md, "Payment plans"): an agreement that an open invoice's balance is paid in
-- instalments. While a plan is active the invoice's dunning takes no step; payments (and nothing else) fill the
-- instalments in order; a plan breaks 10 days after an instalment's due date if that instalment is still not fully
-- paid, and dunning resumes from the break date.
--
-- The instalments are fixed when the plan is made, so they are kept with it as one value
-- ([{number, dueDate, amountOere}], numbered from 1, dates strictly increasing). What has been received towards them
-- (paid_oere) is counted in the transaction of each payment, so filling is exact under retries: a payment is booked
-- once, and its amount is added in the same transaction. created_on and ended_on are business dates: interest is not
-- charged for the days in between when the plan waives it, and dunning resumes no earlier than ended_on.
CREATE TABLE payment_plans (
  id              uuid PRIMARY KEY,
  organization_id uuid NOT NULL REFERENCES organizations (id),
  invoice_id      uuid NOT NULL,
  customer_id     uuid NOT NULL,
  status          text NOT NULL CHECK (status IN ('active', 'completed', 'broken', 'cancelled')),
  waive_interest  boolean NOT NULL,
  installments    jsonb NOT NULL CHECK (jsonb_typeof(installments) = 'array' AND jsonb_array_length(installments) BETWEEN 2 AND 24),
  total_oere      bigint NOT NULL CHECK (total_oere > 0),
  paid_oere       bigint NOT NULL DEFAULT 0 CHECK (paid_oere >= 0),
  created_on      date NOT NULL,
  ended_on        date,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  ended_at        timestamptz,
  FOREIGN KEY (organization_id, invoice_id) REFERENCES invoices (organization_id, id),
  FOREIGN KEY (organization_id, customer_id) REFERENCES customers (organization_id, id),
  CHECK ((status = 'active') = (ended_on IS NULL)),
  CHECK ((status = 'active') = (ended_at IS NULL))
);
-- One active plan per invoice (409 payment_plan_exists is the answer; this is the final guard).
CREATE UNIQUE INDEX payment_plans_one_active ON payment_plans (organization_id, invoice_id) WHERE status = 'active';
-- The invoice's plans newest first: GET …/payment-plan reads the latest, dunning the latest ended.
CREATE INDEX payment_plans_invoice ON payment_plans (organization_id, invoice_id, created_at DESC, id DESC);
