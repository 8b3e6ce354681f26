-- Late-payment interest and the 310 kr compensation (docs/reminders.md, "Interest" and "Compensation"): the two
-- reminder settings that switch them on; what each reminder step charged of them (beside its fee), for the reminder
-- history, the events and the letter; and the last day an invoice's interest has been posted through, from which the
-- next posting counts (null: none yet, counting from the day after the due date). The claim items themselves are
-- invoice_fees rows (036_reference_rates.sql).
ALTER TABLE reminder_settings
  ADD COLUMN late_interest text NOT NULL DEFAULT 'none' CHECK (late_interest IN ('none', 'statutory')),
  ADD COLUMN compensation  boolean NOT NULL DEFAULT false;

ALTER TABLE reminders
  ADD COLUMN interest_oere     bigint NOT NULL DEFAULT 0 CHECK (interest_oere >= 0),
  ADD COLUMN compensation_oere bigint NOT NULL DEFAULT 0 CHECK (compensation_oere >= 0);

ALTER TABLE invoices ADD COLUMN interest_posted_through date;

-- The reminder step that charged a claim item (the interest it posted, the compensation it charged): the reminder's
-- letter lists its own items apart from those charged before it. Null for items posted otherwise (a settlement).
ALTER TABLE invoice_fees ADD COLUMN reminder_id uuid;
CREATE INDEX invoice_fees_reminder ON invoice_fees (organization_id, reminder_id) WHERE reminder_id IS NOT NULL;
