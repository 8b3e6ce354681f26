-- The dunning lifecycle of every issued invoice (docs/reminders.md): its wake-index row from the moment it is
-- issued until it is settled, and the date it was settled.

-- Issued: the engine first looks at the invoice the day after its due date (no step can come sooner), then plans
-- each next step exactly. Settled by a payment: the date is kept (the end of its overdue stretch) and the lifecycle
-- ends. The Dunning object's key is '<organisation>:<invoice>'.
CREATE FUNCTION invoices_dunning() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.type = 'invoice' AND OLD.status = 'issuing' AND NEW.status = 'issued' AND NEW.due_date IS NOT NULL THEN
    PERFORM wake_schedule('Dunning', 'wake', NEW.organization_id::text || ':' || NEW.id::text, NEW.organization_id,
                          (NEW.due_date + 1)::timestamp AT TIME ZONE 'Europe/Copenhagen');
  ELSIF NEW.status = 'paid' AND OLD.status <> 'paid' THEN
    NEW.settled_on := coalesce(NEW.settled_on, business_today(NEW.organization_id));
    PERFORM wake_clear('Dunning', NEW.organization_id::text || ':' || NEW.id::text);
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER invoices_dunning BEFORE UPDATE OF status ON invoices FOR EACH ROW EXECUTE FUNCTION invoices_dunning();

-- Invoices issued before the engine existed join it: each open one is looked at the day after its due date (one in
-- collections ends its lifecycle at that first look).
INSERT INTO wake_index (service, handler, key, organization_id, due_at)
SELECT 'Dunning', 'wake', organization_id::text || ':' || id::text, organization_id, (due_date + 1)::timestamp AT TIME ZONE 'Europe/Copenhagen'
FROM invoices WHERE type = 'invoice' AND status IN ('issued', 'overdue', 'collections') AND due_date IS NOT NULL
ON CONFLICT DO NOTHING;
