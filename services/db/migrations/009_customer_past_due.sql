-- customer.past_due and customer.settled fire on the transition only (spec 6, rule 2). pastDue itself is computed on
-- every read (balance-queries.ts); this column is what the integrator was last told, so a transition is a change of
-- it: set to true with customer.past_due, back to false with customer.settled, under the customer's row lock. It is
-- derived state, not customer data: it is never returned and does not touch updated_at.
ALTER TABLE customers ADD COLUMN past_due boolean NOT NULL DEFAULT false;
-- The sweep's "which customers were announced past due" for one organisation.
CREATE INDEX customers_past_due ON customers (organization_id) WHERE past_due;
