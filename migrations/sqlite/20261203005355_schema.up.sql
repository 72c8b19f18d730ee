-- add column "trace_parent" to table: "webhook_events"
ALTER TABLE `webhook_events` ADD COLUMN `trace_parent` text NULL;
-- add column "trace_parent" to table: "refunds"
ALTER TABLE `refunds` ADD COLUMN `trace_parent` text NULL;
-- add column "trace_parent" to table: "events"
ALTER TABLE `events` ADD COLUMN `trace_parent` text NULL;
-- add column "trace_parent" to table: "webhook_deliveries"
ALTER TABLE `webhook_deliveries` ADD COLUMN `trace_parent` text NULL;
-- add column "trace_parent" to table: "payments"
ALTER TABLE `payments` ADD COLUMN `trace_parent` text NULL;
