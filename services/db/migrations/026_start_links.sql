-- Start links (docs/api-conventions.md, "Start links"): a session per step a
-- person completes on a hosted page: business identity verification, card-field setup, the accounting connection.
--
-- status: 'open' until the person completes ('completed', final) or abandons ('abandoned') the step on the page, or
-- until the organisation's next call finds it past expires_at and opens another one ('expired'). An open session past
-- expires_at is expired already (the page says so); the column catches up on that next call.
--
-- The link's token (256 random bits) is found by its SHA-256 (token_hash): the pay service needs no key to look a
-- link up, and a copy of the table does not open any page. The API shows an open session's link again on a repeat
-- call, so it keeps the token encrypted with the data key (token_enc) until the session leaves 'open'.
CREATE TABLE start_link_sessions (
  organization_id uuid NOT NULL REFERENCES organizations (id),
  id              uuid NOT NULL,
  kind            text NOT NULL CHECK (kind IN ('verification', 'card_setup', 'accounting_connection')),
  status          text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'completed', 'abandoned', 'expired')),
  token_hash      bytea NOT NULL UNIQUE,
  token_enc       bytea,
  created_at      timestamptz NOT NULL DEFAULT now(),
  -- On the organisation's clock (business_now: a sandbox's test clock), like every other business time.
  expires_at      timestamptz NOT NULL,
  completed_at    timestamptz,
  ended_at        timestamptz,
  PRIMARY KEY (organization_id, id),
  CHECK ((status = 'open') = (token_enc IS NOT NULL)),
  CHECK ((status = 'completed') = (completed_at IS NOT NULL)),
  CHECK ((status IN ('abandoned', 'expired')) = (ended_at IS NOT NULL))
);

-- One live session per organisation and kind: at most one open, and once one is completed no other is opened (the
-- repeat call reports the completed one). Concurrent first calls are serialised by a lock on (organisation, kind);
-- this index is what holds should anything get past it.
CREATE UNIQUE INDEX start_link_sessions_live ON start_link_sessions (organization_id, kind) WHERE status IN ('open', 'completed');
