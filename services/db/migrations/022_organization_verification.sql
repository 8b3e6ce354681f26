-- The organisation's business-identity verification (docs/api-conventions.md, "Start links"): 'unverified' until a
-- verification session completes. Shown by GET /v1/settings; payouts (GET /v1/settlements) are held until 'verified'.
ALTER TABLE organizations
  ADD COLUMN verification text NOT NULL DEFAULT 'unverified' CHECK (verification IN ('unverified', 'pending', 'verified'));
