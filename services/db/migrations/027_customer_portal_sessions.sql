-- The customer portal's sign-in (docs/customer-portal.md): one-time links mailed to a debtor, the sessions they open,
-- and the attempts the link requests are rate-limited by. Tokens are stored only as their SHA-256, so a copy of the
-- database signs no one in. A link and a session name an e-mail address by the customers' own blind index
-- (customers.email_bidx): the session sees the organisation's customers with that address at each request, so
-- changing or erasing a customer's address ends its access at once.
--
-- The mail is sent by the PortalSignInMail workflow (key: the link's id), listed in the wake index from the request's
-- commit on. Until it has gone out the token is kept encrypted (token_enc, like personal data) so the workflow can
-- write it into the mail without it ever passing through the engine's journal; the mail step clears it.
CREATE TABLE portal_sign_in_links (
  token_sha256    bytea PRIMARY KEY CHECK (length(token_sha256) = 32),
  id              uuid NOT NULL UNIQUE,
  organization_id uuid NOT NULL REFERENCES organizations (id),
  email_bidx      bytea NOT NULL,
  token_enc       bytea,
  -- Where the link points, up to the token: `<origin>/portal/<subdomain>/sign-in` or `https://<portal host>/sign-in`.
  link_base       text NOT NULL,
  language        text NOT NULL CHECK (language IN ('da', 'en')),
  created_at      timestamptz NOT NULL DEFAULT now(),
  expires_at      timestamptz NOT NULL,
  -- What became of the mail: 'mailed', or why not ('expired', 'no_recipient', 'refused' by the server, 'failed' after retries).
  mail_outcome    text CHECK (mail_outcome IN ('mailed', 'expired', 'no_recipient', 'refused', 'failed')),
  mailed_at       timestamptz,
  -- Set when the link is redeemed: a link opens one session, once.
  used_at         timestamptz,
  CHECK (mail_outcome IS NULL OR token_enc IS NULL)
);
CREATE INDEX portal_sign_in_links_expiry ON portal_sign_in_links (organization_id, expires_at);

CREATE TABLE portal_sessions (
  token_sha256    bytea PRIMARY KEY CHECK (length(token_sha256) = 32),
  organization_id uuid NOT NULL REFERENCES organizations (id),
  email_bidx      bytea NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  expires_at      timestamptz NOT NULL,
  -- Set by signing out; an ended session is refused like an expired one.
  ended_at        timestamptz
);
CREATE INDEX portal_sessions_expiry ON portal_sessions (organization_id, expires_at);

-- One row per granted link request, under two keys (the address asked for and the client's address, each as a keyed
-- hash: neither is stored in clear). The limit counts the rows of a key within the window; refused requests add none.
CREATE TABLE portal_sign_in_attempts (
  organization_id uuid NOT NULL REFERENCES organizations (id),
  limit_key       bytea NOT NULL,
  attempted_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX portal_sign_in_attempts_key ON portal_sign_in_attempts (organization_id, limit_key, attempted_at);
