-- E-invoices (docs/einvoicing.md): a customer's e-invoice address (a GLN as `ean`, or a Peppol participant id) and
-- EU VAT number; an invoice's buyer and order references; and the index of the e-invoice documents made of an
-- issued invoice or credit note, one per profile, written once like the PDF's hash on the invoice row.
ALTER TABLE customers
  ADD COLUMN ean        text CHECK (ean ~ '^[0-9]{13}$'),
  ADD COLUMN peppol_id  text CHECK (peppol_id ~ '^[0-9]{4}:[A-Za-z0-9.-]{1,50}$'),
  ADD COLUMN vat_number text CHECK (vat_number ~ '^[A-Z]{2}[A-Z0-9]{2,13}$');

ALTER TABLE invoices
  ADD COLUMN buyer_reference text CHECK (length(buyer_reference) BETWEEN 1 AND 200),
  ADD COLUMN order_reference text CHECK (length(order_reference) BETWEEN 1 AND 200);

-- A subscription's references, copied onto every period's invoice (its customer may receive e-invoices).
ALTER TABLE subscriptions
  ADD COLUMN buyer_reference text CHECK (length(buyer_reference) BETWEEN 1 AND 200),
  ADD COLUMN order_reference text CHECK (length(order_reference) BETWEEN 1 AND 200);

-- The channel of an invoice's send: e-mail, or the e-invoice access point for a customer with an e-invoice address.
ALTER TABLE invoice_sends ADD COLUMN channel text NOT NULL DEFAULT 'email' CHECK (channel IN ('email', 'einvoice'));

-- Which stored document is an issued document's e-invoice in a profile. Only ever inserted: the first request for a
-- profile builds it, every later one reads it, so the bytes never change after the customer does.
CREATE TABLE invoice_einvoices (
  organization_id  uuid NOT NULL,
  invoice_id       uuid NOT NULL,
  profile          text NOT NULL CHECK (profile IN ('peppol-bis-3', 'oioubl')),
  document_sha256  bytea NOT NULL CHECK (length(document_sha256) = 32),
  created_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, invoice_id, profile),
  FOREIGN KEY (organization_id, invoice_id) REFERENCES invoices (organization_id, id)
);

CREATE FUNCTION invoice_einvoices_write_once() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'an e-invoice, once made, is never changed or removed' USING ERRCODE = 'insufficient_privilege';
END
$$;
CREATE TRIGGER invoice_einvoices_write_once BEFORE UPDATE OR DELETE ON invoice_einvoices
  FOR EACH ROW EXECUTE FUNCTION invoice_einvoices_write_once();
