-- An organisation's plan (docs/reminder-flows.md, "The plan"): 'standard' by default, 'pro' includes the
-- reminder-flow routes. Read with the API key on every request (api-key-queries.ts), so it is a column of the
-- organisation rather than a table of its own.
ALTER TABLE organizations ADD COLUMN plan text NOT NULL DEFAULT 'standard' CHECK (plan IN ('standard', 'pro'));
