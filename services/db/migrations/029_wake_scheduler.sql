-- The wake index becomes the scheduler (docs/architecture.md, "Time-driven work"): due work starts at its due time,
-- with at most one invocation in flight or queued per row, admitted fairly across organisations.
--
-- Every row belongs to one of eight shards, by its organisation (the last hex digit of the id, whose UUIDv7 tail is
-- random; services/clock/wake-shards.ts is the TypeScript twin). Each shard has one scheduler (the WakeScheduler
-- object, keyed by the shard) with one armed timer to its earliest row. A poke no longer calls a handler directly: it
-- *claims* the row (claimed_at, a new claim_token) and only the claimer sends, so a row that is claimed already is
-- not sent again whatever pokes it. The handler releases its claim when it finishes.

CREATE FUNCTION wake_shard(org uuid) RETURNS smallint LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT (('x' || right(org::text, 1))::bit(4)::int & 7)::smallint
$$;

-- Claim tokens come from one sequence, never from the row: a row deleted and listed again (a send that failed and
-- was asked for again) must not hand out a token an earlier claim of it had, or a late release of that claim would
-- release the new one, and a send would repeat the earlier one's idempotency key.
CREATE SEQUENCE wake_claim_tokens;

ALTER TABLE wake_index
  ADD COLUMN shard smallint GENERATED ALWAYS AS (wake_shard(organization_id)) STORED,
  -- Set while an invocation of the row's handler is in flight or queued; claim_token names that invocation.
  ADD COLUMN claimed_at timestamptz,
  ADD COLUMN claim_token bigint NOT NULL DEFAULT 0;

-- The scheduler's range: a shard's unclaimed rows in due order, stopping at now. Rows leave it while claimed.
CREATE INDEX wake_index_shard_due ON wake_index (shard, due_at) WHERE parked_at IS NULL AND claimed_at IS NULL;
-- What each organisation has in flight, for fair admission; small (only claimed rows).
CREATE INDEX wake_index_claimed ON wake_index (shard, organization_id) WHERE claimed_at IS NOT NULL;
-- The per-organisation range of a sandbox organisation whose clock runs ahead, unclaimed rows only.
CREATE INDEX wake_index_org_unclaimed ON wake_index (organization_id, due_at) WHERE parked_at IS NULL AND claimed_at IS NULL;

-- When each shard's scheduler has its timer armed (real time), so that a row scheduled earlier can move it.
CREATE TABLE wake_shards (
  shard     smallint PRIMARY KEY CHECK (shard BETWEEN 0 AND 7),
  armed_at  timestamptz
);
INSERT INTO wake_shards (shard) SELECT generate_series(0, 7);

-- A row's due time in real time: a sandbox organisation's business clock runs ahead by its offset.
CREATE FUNCTION wake_real_due(p_org uuid, p_due timestamptz) RETURNS timestamptz LANGUAGE sql STABLE AS $$
  SELECT p_due - (business_now(p_org) - now())
$$;

-- Schedules (or moves) one row; a new schedule of parked work un-parks it. A claim in flight is kept: the invocation
-- that holds it re-reads the facts when it runs, and its release hands the row on if it is due again. A row earlier
-- than its shard's armed timer (and not due at once: those are handed off after commit) notifies the schedulers'
-- listener, which moves the timer.
CREATE OR REPLACE FUNCTION wake_schedule(p_service text, p_handler text, p_key text, p_org uuid, p_due timestamptz) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  v_real timestamptz := wake_real_due(p_org, p_due);
BEGIN
  INSERT INTO wake_index (service, handler, key, organization_id, due_at) VALUES (p_service, p_handler, p_key, p_org, p_due)
  ON CONFLICT (service, key) DO UPDATE SET handler = EXCLUDED.handler, due_at = EXCLUDED.due_at, parked_at = NULL, last_error = NULL;
  IF v_real > now() + interval '1 second'
     AND v_real < coalesce((SELECT armed_at FROM wake_shards WHERE shard = wake_shard(p_org)), 'infinity') THEN
    PERFORM pg_notify('wake_earlier', wake_shard(p_org)::text);
  END IF;
END
$$;

-- Claims one row for a poke: answers the claim's token, or nothing when the row is claimed already, parked, gone or
-- not yet due by its organisation's business clock.
CREATE FUNCTION wake_claim(p_service text, p_key text) RETURNS TABLE (handler text, claim_token bigint) LANGUAGE sql AS $$
  UPDATE wake_index w SET claimed_at = now(), claim_token = nextval('wake_claim_tokens')
  WHERE w.service = p_service AND w.key = p_key AND w.claimed_at IS NULL AND w.parked_at IS NULL
    AND w.due_at <= business_now(w.organization_id)
  RETURNING w.handler, w.claim_token
$$;

-- Claims up to p_limit due rows of one shard, fairly: an organisation has at most p_per_org rows in flight, and the
-- rows admitted go round the organisations (each one's oldest first, then each one's second, …), so one
-- organisation's backlog cannot hold up another's due work. Reads only due rows: the live range of the shard's
-- index up to now, and one range per sandbox organisation whose clock runs ahead.
CREATE FUNCTION wake_claim_due(p_shard smallint, p_limit int, p_per_org int)
RETURNS TABLE (service text, key text, handler text, claim_token bigint, organization_id uuid, due_at timestamptz) LANGUAGE sql AS $$
  WITH ahead AS (
    SELECT c.organization_id, business_now(c.organization_id) AS bnow
    FROM test_clocks c JOIN organizations o ON o.id = c.organization_id
    WHERE c.offset_ms > 0 AND o.sandbox AND wake_shard(c.organization_id) = p_shard
  ), due AS (
    SELECT w.service, w.key, w.organization_id, w.due_at FROM wake_index w
    WHERE w.shard = p_shard AND w.parked_at IS NULL AND w.claimed_at IS NULL AND w.due_at <= now()
    UNION
    SELECT w.service, w.key, w.organization_id, w.due_at FROM ahead a
    CROSS JOIN LATERAL (
      SELECT w.service, w.key, w.organization_id, w.due_at FROM wake_index w
      WHERE w.organization_id = a.organization_id AND w.parked_at IS NULL AND w.claimed_at IS NULL
        AND w.due_at > now() AND w.due_at <= a.bnow
    ) w
  ), in_flight AS (
    SELECT w.organization_id, count(*) AS n FROM wake_index w
    WHERE w.shard = p_shard AND w.claimed_at IS NOT NULL GROUP BY w.organization_id
  ), ranked AS (
    SELECT d.*, row_number() OVER (PARTITION BY d.organization_id ORDER BY d.due_at, d.service, d.key) AS rn,
           coalesce(f.n, 0) AS busy
    FROM due d LEFT JOIN in_flight f ON f.organization_id = d.organization_id
  ), admitted AS (
    SELECT r.service, r.key FROM ranked r WHERE r.rn + r.busy <= p_per_org
    ORDER BY r.rn, r.due_at LIMIT p_limit
  )
  UPDATE wake_index w SET claimed_at = now(), claim_token = nextval('wake_claim_tokens')
  FROM admitted a
  WHERE w.service = a.service AND w.key = a.key AND w.claimed_at IS NULL AND w.parked_at IS NULL
  RETURNING w.service, w.key, w.handler, w.claim_token, w.organization_id, w.due_at
$$;

-- Releases a claim when its invocation finished (only that claim: a later one is left alone; a NULL token releases
-- nothing). While the row is still
-- listed, answers what its handler needs to decide whether to nudge the shard's scheduler: the shard, the row's due
-- time in real time (null when parked), the shard's armed time, and whether the organisation has due rows waiting
-- for an in-flight slot.
CREATE FUNCTION wake_release(p_service text, p_key text, p_token bigint)
RETURNS TABLE (shard smallint, real_due_at timestamptz, armed_at timestamptz, backlog boolean) LANGUAGE sql AS $$
  WITH released AS (
    UPDATE wake_index w SET claimed_at = NULL
    WHERE w.service = p_service AND w.key = p_key AND w.claim_token = p_token AND w.claimed_at IS NOT NULL
    RETURNING w.shard, w.organization_id, w.parked_at, w.due_at
  ), unclaimed_call AS (
    -- A call that was sent no claim (an operator's, or one from before claims) releases nothing and reads the row.
    SELECT w.shard, w.organization_id, w.parked_at, w.due_at FROM wake_index w
    WHERE p_token IS NULL AND w.service = p_service AND w.key = p_key AND w.claimed_at IS NULL
  ), r AS (SELECT * FROM released UNION ALL SELECT * FROM unclaimed_call)
  SELECT r.shard,
         CASE WHEN r.parked_at IS NULL THEN wake_real_due(r.organization_id, r.due_at) END,
         (SELECT s.armed_at FROM wake_shards s WHERE s.shard = r.shard),
         EXISTS (SELECT 1 FROM wake_index o
                 WHERE o.organization_id = r.organization_id AND o.parked_at IS NULL AND o.claimed_at IS NULL
                   AND o.due_at <= business_now(r.organization_id) AND (o.service, o.key) <> (p_service, p_key))
  FROM r
$$;

-- The real time of a shard's earliest unclaimed row (its scheduler arms its timer there): the head of the shard's
-- range, or an earlier row of a sandbox organisation whose clock runs ahead.
CREATE FUNCTION wake_next_due(p_shard smallint) RETURNS timestamptz LANGUAGE sql STABLE AS $$
  SELECT min(t) FROM (
    (SELECT w.due_at AS t FROM wake_index w
     WHERE w.shard = p_shard AND w.parked_at IS NULL AND w.claimed_at IS NULL ORDER BY w.due_at LIMIT 1)
    UNION ALL
    SELECT (SELECT w.due_at FROM wake_index w
            WHERE w.organization_id = c.organization_id AND w.parked_at IS NULL AND w.claimed_at IS NULL
            ORDER BY w.due_at LIMIT 1) - (business_now(c.organization_id) - now())
    FROM test_clocks c JOIN organizations o ON o.id = c.organization_id
    WHERE c.offset_ms > 0 AND o.sandbox AND wake_shard(c.organization_id) = p_shard
  ) x
$$;
