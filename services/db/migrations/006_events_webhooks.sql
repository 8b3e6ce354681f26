-- Webhook endpoints, the relay outbox of the event log, durable deliveries with their attempts, per-organisation
-- test clocks and the wake index of pending timed steps.

-- A sandbox organisation's business clock runs offset_ms ahead of real time; it only ever moves forward. Live
-- organisations never have a row (their business time is real time).
CREATE TABLE test_clocks (
  organization_id  uuid PRIMARY KEY REFERENCES organizations (id),
  offset_ms        bigint NOT NULL DEFAULT 0 CHECK (offset_ms >= 0),
  updated_at       timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE webhook_endpoints (
  id                          uuid PRIMARY KEY,
  organization_id             uuid NOT NULL REFERENCES organizations (id),
  -- Immutable after creation: a new destination is a new endpoint with a new secret.
  url                         text NOT NULL CHECK (length(url) BETWEEN 1 AND 500),
  event_types                 text[] NOT NULL CHECK (cardinality(event_types) BETWEEN 1 AND 28),
  description                 text CHECK (length(description) <= 200),
  active                      boolean NOT NULL DEFAULT true,
  -- Signing secrets (whsec_…), encrypted with the keyring. After a rotation the previous one keeps signing until
  -- previous_secret_expires_at (24 hours).
  secret_enc                  bytea NOT NULL,
  previous_secret_enc         bytea,
  previous_secret_expires_at  timestamptz,
  created_at                  timestamptz NOT NULL DEFAULT now(),
  updated_at                  timestamptz NOT NULL DEFAULT now(),
  CHECK ((previous_secret_enc IS NULL) = (previous_secret_expires_at IS NULL))
);
CREATE UNIQUE INDEX webhook_endpoints_org_id ON webhook_endpoints (organization_id, id);
CREATE INDEX webhook_endpoints_org_active ON webhook_endpoints (organization_id) WHERE active;

-- The relay's outbox: one row per committed event that at least one active endpoint wants, written by the trigger
-- below in the event's own transaction, removed once the event has been handed to the workflow engine. A crash
-- between commit and hand-off leaves the row, and the relay's sweep hands it on later.
CREATE TABLE event_outbox (
  event_id         uuid PRIMARY KEY REFERENCES events (id),
  organization_id  uuid NOT NULL,
  created_at       timestamptz NOT NULL DEFAULT clock_timestamp(),
  -- A relay that takes a row claims it until then; a relay that died holding the claim lets it lapse.
  claimed_until    timestamptz
);

CREATE FUNCTION events_to_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- Events no endpoint wants are not relayed at all: a replay or the pull feed still finds them in the log.
  IF EXISTS (SELECT 1 FROM webhook_endpoints
             WHERE organization_id = NEW.organization_id AND active AND NEW.type = ANY (event_types)) THEN
    INSERT INTO event_outbox (event_id, organization_id) VALUES (NEW.id, NEW.organization_id);
    -- Delivered at commit only, and collapsed to one per transaction (same channel, same payload).
    PERFORM pg_notify('event_outbox', '');
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER events_outbox AFTER INSERT ON events FOR EACH ROW EXECUTE FUNCTION events_to_outbox();

-- The event log is append-only.
CREATE FUNCTION events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the event log is append-only: % is not allowed', TG_OP USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER events_no_update BEFORE UPDATE OR DELETE ON events FOR EACH ROW EXECUTE FUNCTION events_append_only();
CREATE INDEX events_org_type_id ON events (organization_id, type, id);

-- One delivery per (event, endpoint); a ping has no event and carries its own body. message_id is the webhook-id
-- header: the event id (or the ping's id), identical across every attempt and replay.
CREATE TABLE webhook_deliveries (
  id               uuid PRIMARY KEY,
  organization_id  uuid NOT NULL REFERENCES organizations (id),
  endpoint_id      uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  event_id         uuid REFERENCES events (id),
  ping             jsonb,
  message_id       uuid NOT NULL,
  status           text NOT NULL CHECK (status IN ('queued', 'delivered', 'failed', 'given-up')),
  -- A replay starts a new round with a fresh retry schedule; attempts counts the current round's attempts.
  round            integer NOT NULL DEFAULT 1 CHECK (round >= 1),
  attempts         integer NOT NULL DEFAULT 0 CHECK (attempts BETWEEN 0 AND 8),
  -- Business time (the organisation's clock) of the next attempt; null once delivered or given up.
  next_attempt_at  timestamptz,
  last_attempt_at  timestamptz,
  last_status_code integer,
  last_error       text,
  delivered_at     timestamptz,
  -- Whoever is attempting the delivery right now (the fan-out step for a first attempt, or the delivery's own
  -- workflow), until then: two attempts of one delivery never overlap. A claim whose holder died lapses.
  claimed_by       text,
  claimed_until    timestamptz,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  CHECK ((event_id IS NULL) <> (ping IS NULL)),
  CHECK ((status IN ('queued', 'failed')) = (next_attempt_at IS NOT NULL))
);
CREATE UNIQUE INDEX webhook_deliveries_endpoint_event ON webhook_deliveries (endpoint_id, event_id) WHERE event_id IS NOT NULL;
CREATE INDEX webhook_deliveries_endpoint_status ON webhook_deliveries (endpoint_id, status);
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id);

-- Every attempt: when (real time), HTTP status (null when no response came), how long it took, and why it failed.
CREATE TABLE webhook_attempts (
  delivery_id      uuid NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
  round            integer NOT NULL,
  number           integer NOT NULL CHECK (number BETWEEN 1 AND 8),
  organization_id  uuid NOT NULL,
  attempted_at     timestamptz NOT NULL,
  status_code      integer,
  duration_ms      integer NOT NULL,
  error            text,
  succeeded        boolean NOT NULL,
  PRIMARY KEY (delivery_id, round, number)
);

-- Pending timed steps in business time: one row per (workflow service, key) that is waiting for its moment.
-- Advancing a test clock wakes exactly the rows that have come due; a sweep wakes rows whose wake-up was lost.
CREATE TABLE wake_index (
  service          text NOT NULL,
  key              text NOT NULL,
  organization_id  uuid NOT NULL REFERENCES organizations (id),
  due_at           timestamptz NOT NULL,
  PRIMARY KEY (service, key)
);
CREATE INDEX wake_index_org_due ON wake_index (organization_id, due_at);
CREATE INDEX wake_index_due ON wake_index (due_at);
