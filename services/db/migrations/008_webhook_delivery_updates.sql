-- A delivery is written once and updated once on the hot path (its attempt recorded). No index may cover a column
-- that changes as a delivery moves on (status, attempts, claims), and pages keep room for the new row version, so
-- those updates stay heap-only (HOT) and touch no index. The endpoint filter (replay, reactivation, deletion) needs
-- only the endpoint id.
DROP INDEX webhook_deliveries_endpoint_status;
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id);
ALTER TABLE webhook_deliveries SET (fillfactor = 70);
