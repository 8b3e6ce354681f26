-- Terms-acceptance evidence (POST /v1/betingelse-accept, docs/api-conventions.md "Terms evidence"): proof that a
-- debtor accepted a given version of the terms (its SHA-256) at a given instant, for an invoice, an order of the
-- caller's, or both. A record is written once and never changed or removed.
--
-- The caller's own key (`idempotensnoegle`) is unique per organisation: a second record with the same key is the
-- same evidence (replayed) or a conflict, whichever request header key carries it and however two requests race.
--
-- `invoice_id` has no foreign key on purpose: the invoice is checked (and share-locked) when the evidence is
-- recorded, but the evidence outlives a draft that is deleted later. The draft takes its own timeline with it; the
-- record keeps the id the caller gave.
CREATE TABLE terms_evidence (
  organization_id     uuid NOT NULL REFERENCES organizations (id),
  id                  uuid NOT NULL,
  invoice_id          uuid,
  external_order_ref  text CHECK (length(external_order_ref) BETWEEN 1 AND 200),
  terms_version       text NOT NULL CHECK (length(terms_version) BETWEEN 1 AND 100),
  terms_hash          text NOT NULL CHECK (terms_hash ~ '^[0-9a-f]{64}$'),
  accepted_at         timestamptz NOT NULL,
  evidence_key        text NOT NULL CHECK (length(evidence_key) BETWEEN 1 AND 200),
  created_at          timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, id),
  CHECK (invoice_id IS NOT NULL OR external_order_ref IS NOT NULL)
);
CREATE UNIQUE INDEX terms_evidence_key ON terms_evidence (organization_id, evidence_key);
CREATE INDEX terms_evidence_invoice ON terms_evidence (organization_id, invoice_id) WHERE invoice_id IS NOT NULL;

CREATE FUNCTION terms_evidence_write_once() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'terms evidence is write-once: % is not allowed', TG_OP USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER terms_evidence_no_change BEFORE UPDATE OR DELETE ON terms_evidence FOR EACH ROW EXECUTE FUNCTION terms_evidence_write_once();
CREATE TRIGGER terms_evidence_no_truncate BEFORE TRUNCATE ON terms_evidence FOR EACH STATEMENT EXECUTE FUNCTION terms_evidence_write_once();
