-- A webhook endpoint's event types are bounded by the event catalogue's size, which grows with the catalogue
-- (contracts/events.ts; the API refuses more, unknown or repeated types): the table keeps only "at least one", so a
-- type added to the catalogue needs no change here.
ALTER TABLE webhook_endpoints
  DROP CONSTRAINT webhook_endpoints_event_types_check,
  ADD CONSTRAINT webhook_endpoints_event_types_check CHECK (cardinality(event_types) >= 1);
