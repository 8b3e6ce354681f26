-- Late-payment interest (docs/reminders.md, "Interest"): Nationalbanken's reference rate for each half-year
-- (renteloven § 5: the rate in force on 1 January applies January–June, on 1 July July–December), the data the
-- statutory rate (reference + 8 percentage points) is computed from. Not per organisation: the law's rate is
-- everyone's. Later half-years are added by the operator (npm run admin -- set-reference-rate).
CREATE TABLE reference_rates (
  from_date          date PRIMARY KEY CHECK (extract(day FROM from_date) = 1 AND extract(month FROM from_date) IN (1, 7)),
  reference_rate_bp  integer NOT NULL CHECK (reference_rate_bp BETWEEN 0 AND 2000),
  created_at         timestamptz NOT NULL DEFAULT now(),
  updated_at         timestamptz NOT NULL DEFAULT now()
);

-- Nationalbanken's lending rate (udlånsrente) in force on each 1 January and 1 July.
INSERT INTO reference_rates (from_date, reference_rate_bp) VALUES
  ('2023-01-01', 190),
  ('2023-07-01', 325),
  ('2024-01-01', 375),
  ('2024-07-01', 350),
  ('2025-01-01', 275),
  ('2025-07-01', 175),
  ('2026-01-01', 175);

-- Interest posted on an invoice: one row per half-year piece of a posting (docs/reminders.md, "Interest"), with the
-- reference rate row it was charged at (the half-year's own, or the latest earlier one), so a rate that has been
-- charged with is never changed under it.
CREATE TABLE invoice_interest_postings (
  organization_id  uuid NOT NULL,
  id               uuid NOT NULL,
  invoice_id       uuid NOT NULL,
  rate_from        date NOT NULL REFERENCES reference_rates (from_date),
  from_date        date NOT NULL,
  to_date          date NOT NULL CHECK (to_date >= from_date),
  rate_bp          integer NOT NULL CHECK (rate_bp > 0),
  amount_oere      bigint NOT NULL CHECK (amount_oere > 0),
  posted_on        date NOT NULL,
  created_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, id),
  FOREIGN KEY (organization_id, invoice_id) REFERENCES invoices (organization_id, id)
);
CREATE INDEX invoice_interest_postings_invoice ON invoice_interest_postings (organization_id, invoice_id, to_date);
CREATE INDEX invoice_interest_postings_rate ON invoice_interest_postings (rate_from);
