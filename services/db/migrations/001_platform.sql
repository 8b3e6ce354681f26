-- Organisations, API keys, idempotent responses, customers, departments, products and sales accounts.
-- Every tenant-owned row carries organization_id and every query filters on it.

CREATE TABLE organizations (
  id                          uuid PRIMARY KEY,
  name                        text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  cvr                         text CHECK (cvr ~ '^[0-9]{8}$'),
  sandbox                     boolean NOT NULL DEFAULT false,
  street                      text,
  postal_code                 text,
  city                        text,
  email                       text,
  bank_reg                    text,
  bank_account                text,
  default_payment_terms_days  integer NOT NULL DEFAULT 14 CHECK (default_payment_terms_days BETWEEN 0 AND 365),
  past_due_amount_oere        bigint NOT NULL DEFAULT 10000 CHECK (past_due_amount_oere >= 0),
  past_due_days               integer NOT NULL DEFAULT 14 CHECK (past_due_days >= 0),
  created_at                  timestamptz NOT NULL DEFAULT now(),
  updated_at                  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_keys (
  id               uuid PRIMARY KEY,
  organization_id  uuid NOT NULL REFERENCES organizations (id),
  -- SHA-256 of the whole key; the key itself is shown once and never stored.
  key_hash         bytea NOT NULL UNIQUE,
  display_prefix   text NOT NULL,
  scopes           text[] NOT NULL,
  created_at       timestamptz NOT NULL DEFAULT now(),
  revoked_at       timestamptz
);
CREATE INDEX api_keys_org ON api_keys (organization_id, id);

-- One row per (organisation, Idempotency-Key), written in the same transaction as the effect it describes, so a
-- stored response exists exactly when its effect does. Requests with the same key are serialised by a
-- transaction-scoped advisory lock; the primary key is the final guard against a second effect.
CREATE TABLE idempotency_keys (
  organization_id    uuid NOT NULL REFERENCES organizations (id),
  key                text NOT NULL,
  request_hash       bytea NOT NULL,
  response_status    integer NOT NULL,
  -- The stored response may hold personal data (a customer's e-mail), so it is encrypted like the data itself.
  response_body      bytea,
  response_location  text,
  created_at         timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

CREATE TABLE customers (
  id                  uuid PRIMARY KEY,
  organization_id     uuid NOT NULL REFERENCES organizations (id),
  type                text NOT NULL CHECK (type IN ('person', 'company')),
  name                text NOT NULL,
  cvr                 text,
  address             jsonb,
  email_enc           bytea,
  email_bidx          bytea,
  phone_enc           bytea,
  cpr_enc             bytea,
  contact_person      text,
  language            text CHECK (language IN ('da', 'en')),
  external_reference  text,
  metadata            jsonb,
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX customers_org_id ON customers (organization_id, id);
CREATE INDEX customers_org_cvr ON customers (organization_id, cvr) WHERE cvr IS NOT NULL;
CREATE INDEX customers_org_email ON customers (organization_id, email_bidx) WHERE email_bidx IS NOT NULL;
CREATE INDEX customers_org_extref ON customers (organization_id, external_reference) WHERE external_reference IS NOT NULL;

CREATE TABLE departments (
  id               uuid PRIMARY KEY,
  organization_id  uuid NOT NULL,
  customer_id      uuid NOT NULL,
  name             text NOT NULL,
  contact_person   text,
  reference        text,
  email_enc        bytea,
  sort_order       integer NOT NULL DEFAULT 0,
  created_at       timestamptz NOT NULL DEFAULT now(),
  deleted_at       timestamptz,
  FOREIGN KEY (organization_id, customer_id) REFERENCES customers (organization_id, id)
);
CREATE INDEX departments_customer ON departments (organization_id, customer_id, sort_order, name, id) WHERE deleted_at IS NULL;

CREATE TABLE products (
  id                    uuid PRIMARY KEY,
  organization_id       uuid NOT NULL REFERENCES organizations (id),
  sku                   text NOT NULL,
  name                  text NOT NULL,
  unit_price_oere       bigint NOT NULL CHECK (unit_price_oere BETWEEN 0 AND 100000000000),
  vat_rate_bps          integer NOT NULL CHECK (vat_rate_bps BETWEEN 0 AND 10000),
  vat_exemption_reason  text CHECK (vat_exemption_reason IN ('ML13', 'OMVENDT', 'EU_VARE', 'EKSPORT')),
  account               bigint,
  active                boolean NOT NULL DEFAULT true,
  created_at            timestamptz NOT NULL DEFAULT now(),
  updated_at            timestamptz NOT NULL DEFAULT now(),
  CHECK (vat_rate_bps <> 0 OR vat_exemption_reason IS NOT NULL)
);
CREATE UNIQUE INDEX products_org_sku ON products (organization_id, lower(sku));
CREATE INDEX products_org_id ON products (organization_id, id);

CREATE TABLE sales_accounts (
  id               uuid PRIMARY KEY,
  organization_id  uuid NOT NULL REFERENCES organizations (id),
  account_number   text NOT NULL,
  name             text NOT NULL,
  active           boolean NOT NULL DEFAULT true,
  created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX sales_accounts_org_number ON sales_accounts (organization_id, account_number);
CREATE INDEX sales_accounts_org_id ON sales_accounts (organization_id, id);
