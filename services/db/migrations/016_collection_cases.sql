-- Collection cases (inkassosager): a case created with POST /v1/cases (claims and debtors given in the body) or,
-- later, from an invoice with POST /v1/invoices/{id}/collect. Both share one lifecycle (services/cases/case-lifecycle.ts):
--   OPRETTET → PAAKRAV_SENDT → OVERDRAGET → AFSLUTTET, and TILBAGEKALDT from any state before AFSLUTTET.

-- One gap-free case number series per organisation, apart from the invoice series. The row is locked by the
-- transaction that creates a case, so concurrent creations queue on it and a rolled-back creation takes no number.
CREATE TABLE case_number_series (
  organization_id  uuid PRIMARY KEY REFERENCES organizations (id),
  next_number      bigint NOT NULL DEFAULT 1 CHECK (next_number >= 1)
);

CREATE TABLE collection_cases (
  organization_id     uuid NOT NULL REFERENCES organizations (id),
  id                  uuid NOT NULL,
  case_number         bigint NOT NULL CHECK (case_number >= 1),
  -- The caller's own reference. A case from POST /v1/cases is identified by it (unique per organisation among
  -- those cases); a case from an invoice is identified by its invoice and may carry the invoice's reference or none.
  external_reference  text,
  -- The invoice of a case from POST …/collect; NULL for a case from POST /v1/cases.
  invoice_id          uuid,
  state               text NOT NULL DEFAULT 'OPRETTET'
                      CHECK (state IN ('OPRETTET', 'PAAKRAV_SENDT', 'OVERDRAGET', 'AFSLUTTET', 'TILBAGEKALDT')),
  -- The påkrav (demand letter) date and its deadline, påkrav date + 10 days; the hand-over comes the day after.
  paakrav_sent_on     date,
  paakrav_frist       date,
  handed_over_at      timestamptz,
  -- When the case reached AFSLUTTET or TILBAGEKALDT.
  closed_at           timestamptz,
  -- Keyed MAC of the canonical create body (POST /v1/cases): a repeat with the same externalReference is a replay
  -- when its body has the same MAC, a conflict otherwise, without decrypting anything. NULL for a case from an invoice.
  body_mac            bytea,
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, id),
  UNIQUE (organization_id, case_number),
  FOREIGN KEY (organization_id, invoice_id) REFERENCES invoices (organization_id, id),
  CHECK (invoice_id IS NOT NULL OR (external_reference IS NOT NULL AND body_mac IS NOT NULL)),
  CHECK ((paakrav_sent_on IS NULL) = (paakrav_frist IS NULL)),
  CHECK (paakrav_frist IS NULL OR paakrav_frist >= paakrav_sent_on + 10)
);
CREATE UNIQUE INDEX collection_cases_org_reference ON collection_cases (organization_id, external_reference)
  WHERE invoice_id IS NULL;
-- One case per invoice: a repeated collect finds it.
CREATE UNIQUE INDEX collection_cases_org_invoice ON collection_cases (organization_id, invoice_id)
  WHERE invoice_id IS NOT NULL;

-- The claims (fordringer) of a case, in the order of the body (`position` 0..49). The description is free text a
-- caller may fill with personal data, so it is encrypted like the debtors' fields.
CREATE TABLE case_claims (
  organization_id  uuid NOT NULL,
  case_id          uuid NOT NULL,
  position         integer NOT NULL CHECK (position BETWEEN 0 AND 49),
  principal_oere   bigint NOT NULL CHECK (principal_oere BETWEEN 1 AND 100000000000),
  due_date         date NOT NULL,
  invoice_date     date,
  description_enc  bytea,
  PRIMARY KEY (organization_id, case_id, position),
  FOREIGN KEY (organization_id, case_id) REFERENCES collection_cases (organization_id, id)
);

-- The debtors (skyldnere) of a case, in the order of the body (`position` 0..19). Name, address, e-mail, phone and
-- CPR are AES-256-GCM ciphertext (services/shared/crypto.ts); the address is its JSON object, encrypted whole. The
-- CVR of a company is public register data and kept as given. CPR goes only to the collection partner.
CREATE TABLE case_debtors (
  organization_id  uuid NOT NULL,
  case_id          uuid NOT NULL,
  position         integer NOT NULL CHECK (position BETWEEN 0 AND 19),
  debtor_type      text NOT NULL CHECK (debtor_type IN ('person', 'virksomhed')),
  name_enc         bytea NOT NULL,
  cvr              text CHECK (cvr ~ '^[0-9]{8}$'),
  cpr_enc          bytea,
  address_enc      bytea,
  email_enc        bytea,
  phone_enc        bytea,
  PRIMARY KEY (organization_id, case_id, position),
  FOREIGN KEY (organization_id, case_id) REFERENCES collection_cases (organization_id, id)
);
