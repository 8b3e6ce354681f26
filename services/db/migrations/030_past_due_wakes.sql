-- Past-due announcements as wake-index work (docs/api-conventions.md, "Customer balance"; docs/architecture.md,
-- "Time-driven work"): `customer.past_due` and `customer.settled` as days pass are announced by each organisation's
-- PastDue row (key: the organisation id), due at the next moment time alone can change a customer's state. That
-- replaces the housekeeping pass that looked at every organisation with open invoices every minute.

-- When time alone can next change a customer's past-due state in the organisation: the start of its next business
-- day while an open invoice is past due or a customer stands announced past due; else the day after the earliest
-- due date of an open invoice; else never (null). In business time (Europe/Copenhagen midnights).
CREATE FUNCTION past_due_next_check(p_org uuid) RETURNS timestamptz LANGUAGE sql STABLE AS $$
  SELECT CASE
    WHEN EXISTS (SELECT 1 FROM invoices i
                 WHERE i.organization_id = p_org AND i.type = 'invoice' AND i.status IN ('issued', 'overdue', 'collections')
                   AND i.due_date < business_today(p_org))
      OR EXISTS (SELECT 1 FROM customers c WHERE c.organization_id = p_org AND c.past_due)
    THEN (business_today(p_org) + 1)::timestamp AT TIME ZONE 'Europe/Copenhagen'
    ELSE (SELECT (min(i.due_date) + 1)::timestamp AT TIME ZONE 'Europe/Copenhagen' FROM invoices i
          WHERE i.organization_id = p_org AND i.type = 'invoice' AND i.status IN ('issued', 'overdue', 'collections'))
  END
$$;

-- Schedules a row at `p_due` unless it is listed for earlier already (then it stays): several reasons to look at the
-- same work share one row, at the earliest of them.
CREATE FUNCTION wake_schedule_earliest(p_service text, p_handler text, p_key text, p_org uuid, p_due timestamptz) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM wake_index WHERE service = p_service AND key = p_key AND parked_at IS NULL AND due_at <= p_due) THEN
    PERFORM wake_schedule(p_service, p_handler, p_key, p_org, p_due);
  END IF;
END
$$;

-- An invoice issued: its organisation's PastDue row comes due the day after its due date at the latest.
CREATE FUNCTION invoices_past_due_wake() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.type = 'invoice' AND NEW.status = 'issued' AND OLD.status IS DISTINCT FROM 'issued' AND NEW.due_date IS NOT NULL THEN
    PERFORM wake_schedule_earliest('PastDue', 'wake', NEW.organization_id::text, NEW.organization_id,
                                   (NEW.due_date + 1)::timestamp AT TIME ZONE 'Europe/Copenhagen');
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER invoices_past_due_wake AFTER UPDATE OF status ON invoices FOR EACH ROW EXECUTE FUNCTION invoices_past_due_wake();

-- The organisation's thresholds changed: look now. Due at once, with no request to hand it off: the schedulers'
-- listener is told directly.
CREATE FUNCTION organizations_past_due_wake() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF (NEW.past_due_amount_oere, NEW.past_due_days) IS DISTINCT FROM (OLD.past_due_amount_oere, OLD.past_due_days) THEN
    PERFORM wake_schedule('PastDue', 'wake', NEW.id::text, NEW.id, business_now(NEW.id));
    PERFORM pg_notify('wake_earlier', wake_shard(NEW.id)::text);
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER organizations_past_due_wake AFTER UPDATE OF past_due_amount_oere, past_due_days ON organizations
  FOR EACH ROW EXECUTE FUNCTION organizations_past_due_wake();

-- Organisations with something to look at now join at once.
INSERT INTO wake_index (service, handler, key, organization_id, due_at)
SELECT 'PastDue', 'wake', o.id::text, o.id, now() FROM organizations o
WHERE past_due_next_check(o.id) IS NOT NULL
ON CONFLICT DO NOTHING;
