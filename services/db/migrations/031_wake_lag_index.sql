-- The oldest due row of each durable service, for the workflows process's `faktura_wake_lag_seconds` gauge
-- (services/observability/metrics.ts, docs/operations.md "Metrics"): one index probe per service at every scrape,
-- whatever the index holds. Without it the oldest row of a service is found by walking every due row of all services.
CREATE INDEX wake_index_service_due ON wake_index (service, due_at) WHERE parked_at IS NULL;
