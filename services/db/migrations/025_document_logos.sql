-- The logo each document is printed with (docs/api-conventions.md, "Branding"): the
-- organisation's light logo when the document is issued, recorded in the transaction that issues it and rendered from
-- then on, so an upload or deletion after the issue never changes a document, also one rendered later (an invoice's
-- PDF after its reservation, a reminder's or a receipt's after their commit). NULL: issued without a logo. Images are
-- write-once and never removed, so the recorded one is always there.
ALTER TABLE invoices ADD COLUMN logo_sha256 text;
ALTER TABLE invoices ADD CONSTRAINT invoices_logo
  FOREIGN KEY (organization_id, logo_sha256) REFERENCES branding_images (organization_id, sha256);

ALTER TABLE reminders ADD COLUMN logo_sha256 text;
ALTER TABLE reminders ADD CONSTRAINT reminders_logo
  FOREIGN KEY (organization_id, logo_sha256) REFERENCES branding_images (organization_id, sha256);

ALTER TABLE payment_receipts ADD COLUMN logo_sha256 text;
ALTER TABLE payment_receipts ADD CONSTRAINT payment_receipts_logo
  FOREIGN KEY (organization_id, logo_sha256) REFERENCES branding_images (organization_id, sha256);

-- A receipt is requested by the payment's insert (this trigger, from migration 012): it records the logo of that moment.
CREATE OR REPLACE FUNCTION payment_receipt_requested() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO payment_receipts (payment_id, organization_id, logo_sha256)
  VALUES (NEW.id, NEW.organization_id,
          (SELECT sha256 FROM branding_logos WHERE organization_id = NEW.organization_id AND variant = 'light'));
  INSERT INTO wake_index (service, handler, key, organization_id, due_at) VALUES ('PaymentReceipt', 'render', NEW.id::text, NEW.organization_id, now());
  RETURN NULL;
END $$;

-- A receipt request's logo is part of the request: it is never moved, like its payment.
CREATE OR REPLACE FUNCTION payment_receipts_write_once() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND OLD.document_sha256 IS NULL THEN
    IF NEW.payment_id <> OLD.payment_id OR NEW.organization_id <> OLD.organization_id OR NEW.requested_at <> OLD.requested_at
       OR NEW.logo_sha256 IS DISTINCT FROM OLD.logo_sha256 THEN
      RAISE EXCEPTION 'a receipt request cannot be moved' USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN NEW;
  END IF;
  RAISE EXCEPTION 'receipts are write-once: % is not allowed', TG_OP USING ERRCODE = 'insufficient_privilege';
END $$;
