-- Members: the people of an organisation and their roles (docs/api-conventions.md, "Members and roles"). Added by
-- the operator command (add-member), read and re-roled through the API. The e-mail is personal data: encrypted like a
-- customer's, with a keyed hash of its lower-case form (blind index) so that one address is one member per
-- organisation.
CREATE TABLE members (
  organization_id uuid NOT NULL REFERENCES organizations (id),
  user_id         uuid NOT NULL,
  name            text NOT NULL,
  email_enc       bytea NOT NULL,
  email_bidx      bytea NOT NULL,
  role            text NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, user_id),
  UNIQUE (organization_id, email_bidx)
);
