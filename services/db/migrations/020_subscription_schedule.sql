-- The subscription schedule (docs/api-conventions.md, "Subscriptions", Run): the business date the subscription was
-- created on. A period that started before it (a past startDate caught up) is issued on this day; a period that started
-- after it is issued on its own start date, also when its run comes later (a test clock advance, an outage).
ALTER TABLE subscriptions ADD COLUMN created_on date;
UPDATE subscriptions SET created_on = (created_at AT TIME ZONE 'Europe/Copenhagen')::date;
ALTER TABLE subscriptions ALTER COLUMN created_on SET NOT NULL;
