-- The payment domain and the customer portal's settings (docs/api-conventions.md, "Payment domain"
-- and "Customer portal settings").

-- One payment domain per organisation; no row means status "none". Setting a domain (or a different one) resets the
-- status to 'unverified'; POST /v1/payment-domain/verify looks the TXT record up and records 'verified' or 'failed'.
-- verification_value is the token the TXT record at _faktura-verify.<domain> must hold; it is kept per organisation
-- so that changing the domain does not change what the integrator publishes.
CREATE TABLE payment_domains (
  organization_id    uuid PRIMARY KEY REFERENCES organizations (id),
  domain             text CHECK (domain = lower(domain)),
  status             text NOT NULL DEFAULT 'none' CHECK (status IN ('none', 'unverified', 'verified', 'failed')),
  verification_value text NOT NULL,
  checked_at         timestamptz,
  failure_reason     text,
  updated_at         timestamptz NOT NULL DEFAULT now(),
  CHECK ((domain IS NULL) = (status = 'none'))
);

-- A verified domain belongs to one organisation: the pay service finds the organisation by the Host header.
CREATE UNIQUE INDEX payment_domains_verified_domain ON payment_domains (domain) WHERE status = 'verified';

-- The customer portal's settings; no row means the defaults (no subdomain, inactive, self-service off, palette lys).
CREATE TABLE customer_portals (
  organization_id           uuid PRIMARY KEY REFERENCES organizations (id),
  subdomain                 text UNIQUE CHECK (subdomain ~ '^[a-z0-9]([a-z0-9-]{1,38})[a-z0-9]$'),
  active                    boolean NOT NULL DEFAULT false,
  subscription_self_service boolean NOT NULL DEFAULT false,
  primary_color             text CHECK (primary_color ~ '^#[0-9a-fA-F]{6}$'),
  palette                   text NOT NULL DEFAULT 'lys' CHECK (palette IN ('smoer', 'lys', 'beton', 'sand', 'graa', 'mint', 'blaa', 'is',
                              'groen', 'varm', 'lavendel', 'rosa', 'moerk', 'midnat', 'grafit', 'skov', 'espresso', 'vin')),
  custom_domain             text CHECK (custom_domain = lower(custom_domain)),
  custom_domain_status      text NOT NULL DEFAULT 'none' CHECK (custom_domain_status IN ('none', 'unverified', 'verified', 'failed')),
  custom_domain_checked_at  timestamptz,
  custom_domain_failure     text,
  updated_at                timestamptz NOT NULL DEFAULT now(),
  CHECK (NOT active OR subdomain IS NOT NULL),
  CHECK ((custom_domain IS NULL) = (custom_domain_status = 'none'))
);

-- A verified custom domain belongs to one organisation too: the portal finds its organisation by the Host header.
CREATE UNIQUE INDEX customer_portals_verified_custom_domain ON customer_portals (custom_domain) WHERE custom_domain_status = 'verified';
