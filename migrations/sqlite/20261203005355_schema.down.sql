-- reverse: add column "trace_parent" to table: "payments"
ALTER TABLE `payments` DROP COLUMN `trace_parent`;
-- reverse: add column "trace_parent" to table: "webhook_deliveries"
ALTER TABLE `webhook_deliveries` DROP COLUMN `trace_parent`;
-- reverse: add column "trace_parent" to table: "events"
ALTER TABLE `events` DROP COLUMN `trace_parent`;
-- reverse: add column "trace_parent" to table: "refunds"
ALTER TABLE `refunds` DROP COLUMN `trace_parent`;
-- reverse: add column "trace_parent" to table: "webhook_events"
ALTER TABLE `webhook_events` DROP COLUMN `trace_parent`;
