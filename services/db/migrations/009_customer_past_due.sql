-- customer.past_due and customer.settled fire on the transition only (docs/api-conventions.md, "Customer balance").
-- pastDue itself is computed on every read (balance-queries.ts); these columns are what the integrator was last told,
-- and for which day: a transition is a change of past_due (true with customer.past_due, false with customer.settled),
-- made under the customer's row lock, and a reconciliation for a day before past_due_as_of (a "today" read before a
-- later one was announced) changes nothing. Derived state, not customer data: never returned, and updated_at is not
-- touched. Customers already past due when this is applied are announced once, by the first sweep.
ALTER TABLE customers ADD COLUMN past_due boolean NOT NULL DEFAULT false;
ALTER TABLE customers ADD COLUMN past_due_as_of date;
-- The sweep's "which customers were announced past due" for one organisation.
CREATE INDEX customers_past_due ON customers (organization_id) WHERE past_due;
