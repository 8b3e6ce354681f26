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

-- Interest and the 310 kr compensation are claim items like reminder fees: rows of invoice_fees, so the balance,
-- the customer balance and every reader that sums an invoice's fees carry them with no second mechanism. An
-- interest row is one half-year piece of a posting: its first and last accruing day, the statutory rate it was
-- charged at, and the reference rate row that rate came from (the half-year's own, or the latest earlier one), so a
-- rate that has been charged with is never changed under it.
ALTER TABLE invoice_fees DROP CONSTRAINT invoice_fees_kind_check;
ALTER TABLE invoice_fees
  ADD CONSTRAINT invoice_fees_kind_check CHECK (kind IN ('reminder', 'interest', 'compensation')),
  ADD COLUMN interest_from date,
  ADD COLUMN interest_to   date,
  ADD COLUMN rate_bp       integer CHECK (rate_bp > 0),
  ADD COLUMN rate_from     date REFERENCES reference_rates (from_date),
  ADD CONSTRAINT invoice_fees_interest_piece CHECK (
    (kind = 'interest') = (interest_from IS NOT NULL AND interest_to IS NOT NULL AND rate_bp IS NOT NULL AND rate_from IS NOT NULL)
    AND (interest_to IS NULL OR interest_to >= interest_from)
    AND (kind = 'interest' OR (interest_from IS NULL AND interest_to IS NULL AND rate_bp IS NULL AND rate_from IS NULL)));
CREATE INDEX invoice_fees_rate_from ON invoice_fees (rate_from) WHERE rate_from IS NOT NULL;
