-- One scheduling backbone for durable work (docs/architecture.md, "Time-driven work").
--
-- The wake index lists every piece of durable work that is waiting: a keyed workflow handler (service, key, handler)
-- and the business time it is due. A timed step (a webhook retry, a reminder, a case step, a subscription period) is
-- due when its moment comes; a hand-off after commit (a queued send, a reserved issue, a requested receipt) is due at
-- once. The handler clears its row when the work is done. A row still there a minute after it came due (a step with no
-- timer of its own, or a lost wake-up or hand-off) is found by the housekeeping loop's due-work job, which wakes the
-- organisation, whose BusinessClock object pokes each due row. A row whose handler exhausted its retries is parked
-- (parked_at, last_error): recorded, visible and no longer poked, until an operator or a new schedule of the same work
-- clears the mark.

-- An organisation's business "now": real time, plus the test clock's offset for a sandbox organisation. The one
-- definition in SQL; services/clock/business-clock.ts is the same rule for TypeScript. STABLE (now() is the
-- transaction's start), so a query may compare an indexed column with it.
CREATE FUNCTION business_now(org uuid) RETURNS timestamptz LANGUAGE sql STABLE AS $$
  SELECT now() + make_interval(secs => coalesce(
    (SELECT c.offset_ms FROM organizations o JOIN test_clocks c ON c.organization_id = o.id WHERE o.id = org AND o.sandbox),
    0) / 1000.0)
$$;

-- Its calendar date: an organisation's "today" is the date in Europe/Copenhagen (docs/architecture.md, "Time-driven
-- work").
CREATE FUNCTION business_today(org uuid) RETURNS date LANGUAGE sql STABLE AS $$
  SELECT (business_now(org) AT TIME ZONE 'Europe/Copenhagen')::date
$$;

ALTER TABLE wake_index
  -- 'wake' is the webhook delivery's handler, the rows that existed before this column.
  ADD COLUMN handler text NOT NULL DEFAULT 'wake' CHECK (handler ~ '^[a-zA-Z]{1,40}$'),
  ADD COLUMN parked_at timestamptz,
  ADD COLUMN last_error text CHECK (length(last_error) <= 1000);

-- One organisation's due rows in the order the BusinessClock pages through them: a range scan from the oldest due
-- row to the organisation's business now, whatever is scheduled later.
DROP INDEX wake_index_org_due;
CREATE INDEX wake_index_org_due ON wake_index (organization_id, due_at, service, key) WHERE parked_at IS NULL;
-- Rows overdue in real time, for the housekeeping loop (sandbox organisations ahead of real time are looked up
-- through their test clock, one index range each).
DROP INDEX wake_index_due;
CREATE INDEX wake_index_due ON wake_index (due_at) WHERE parked_at IS NULL;
CREATE INDEX wake_index_parked ON wake_index (parked_at) WHERE parked_at IS NOT NULL;

-- Schedules (or moves) one row; a new schedule of parked work un-parks it.
CREATE FUNCTION wake_schedule(p_service text, p_handler text, p_key text, p_org uuid, p_due timestamptz) RETURNS void
LANGUAGE sql AS $$
  INSERT INTO wake_index (service, handler, key, organization_id, due_at) VALUES (p_service, p_handler, p_key, p_org, p_due)
  ON CONFLICT (service, key) DO UPDATE SET handler = EXCLUDED.handler, due_at = EXCLUDED.due_at, parked_at = NULL, last_error = NULL
$$;

CREATE FUNCTION wake_clear(p_service text, p_key text) RETURNS void LANGUAGE sql AS $$
  DELETE FROM wake_index WHERE service = p_service AND key = p_key
$$;

-- The three hand-offs after commit are listed by the rows that already say the work is pending, so no use case can
-- forget them: a queued send, a reserved issue, a requested receipt. Due at once (real time is never later than an
-- organisation's business time); the post-commit hand-off normally runs them within milliseconds.

CREATE FUNCTION invoice_sends_wake() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.status = 'queued' THEN
    PERFORM wake_schedule('InvoiceMail', 'deliver', NEW.invoice_id::text, NEW.organization_id, now());
  ELSIF TG_OP = 'UPDATE' AND OLD.status = 'queued' THEN
    PERFORM wake_clear('InvoiceMail', NEW.invoice_id::text);
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER invoice_sends_wake AFTER INSERT OR UPDATE OF status ON invoice_sends FOR EACH ROW EXECUTE FUNCTION invoice_sends_wake();

CREATE FUNCTION invoice_issues_wake() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM wake_schedule('InvoiceIssue', 'finish', NEW.invoice_id::text, NEW.organization_id, now());
  ELSE
    PERFORM wake_clear('InvoiceIssue', OLD.invoice_id::text);
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER invoice_issues_wake AFTER INSERT OR DELETE ON invoice_issues FOR EACH ROW EXECUTE FUNCTION invoice_issues_wake();

CREATE OR REPLACE FUNCTION payment_receipt_requested() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO payment_receipts (payment_id, organization_id) VALUES (NEW.id, NEW.organization_id);
  INSERT INTO wake_index (service, handler, key, organization_id, due_at) VALUES ('PaymentReceipt', 'render', NEW.id::text, NEW.organization_id, now());
  RETURN NULL;
END $$;

CREATE FUNCTION payment_receipts_wake() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM wake_clear('PaymentReceipt', NEW.payment_id::text);
  RETURN NULL;
END $$;
CREATE TRIGGER payment_receipts_wake AFTER UPDATE OF document_sha256 ON payment_receipts
  FOR EACH ROW WHEN (NEW.document_sha256 IS NOT NULL) EXECUTE FUNCTION payment_receipts_wake();

-- What is pending today joins the index; the sweeps' own indexes go.
INSERT INTO wake_index (service, handler, key, organization_id, due_at)
SELECT 'InvoiceMail', 'deliver', invoice_id::text, organization_id, requested_at FROM invoice_sends WHERE status = 'queued'
ON CONFLICT DO NOTHING;
INSERT INTO wake_index (service, handler, key, organization_id, due_at)
SELECT 'InvoiceIssue', 'finish', invoice_id::text, organization_id, reserved_at FROM invoice_issues
ON CONFLICT DO NOTHING;
INSERT INTO wake_index (service, handler, key, organization_id, due_at)
SELECT 'PaymentReceipt', 'render', payment_id::text, organization_id, requested_at FROM payment_receipts WHERE document_sha256 IS NULL
ON CONFLICT DO NOTHING;
DROP INDEX invoice_sends_queued;
DROP INDEX invoice_issues_reserved_at;
DROP INDEX payment_receipts_pending;
