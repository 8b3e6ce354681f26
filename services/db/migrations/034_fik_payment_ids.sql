-- FI-kort +71 payment ids (docs/bank-payments.md): an organisation's FI creditor number, and the payment id an
-- invoice issued while it was set carries for life (its number left-padded to 14 digits + a modulus-10 check digit),
-- with the creditor number it was issued under. Bank statement lines are matched to invoices by the payment id.
ALTER TABLE organizations
  ADD COLUMN fi_creditor_number text CHECK (fi_creditor_number ~ '^8[0-9]{7}$');

ALTER TABLE invoices
  ADD COLUMN fik_payment_id      text CHECK (fik_payment_id ~ '^[0-9]{15}$'),
  ADD COLUMN fik_creditor_number text CHECK (fik_creditor_number ~ '^8[0-9]{7}$'),
  ADD CONSTRAINT invoices_fik_whole CHECK ((fik_payment_id IS NULL) = (fik_creditor_number IS NULL));

-- One invoice per payment id in an organisation: what a bank line's reference finds.
CREATE UNIQUE INDEX invoices_org_fik_payment_id ON invoices (organization_id, fik_payment_id) WHERE fik_payment_id IS NOT NULL;
