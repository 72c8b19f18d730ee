-- reverse: create index "webhookevent_provider_received_at" to table: "webhook_events"
DROP INDEX `webhookevent_provider_received_at`;
-- reverse: create index "webhookevent_received_at_id" to table: "webhook_events"
DROP INDEX `webhookevent_received_at_id`;
-- reverse: create index "webhookevent_status_next_attempt_at" to table: "webhook_events"
DROP INDEX `webhookevent_status_next_attempt_at`;
-- reverse: create index "webhookevent_provider_event_id" to table: "webhook_events"
DROP INDEX `webhookevent_provider_event_id`;
-- reverse: create "webhook_events" table
DROP TABLE `webhook_events`;
-- reverse: create index "webhookattempt_event_id_at" to table: "webhook_attempts"
DROP INDEX `webhookattempt_event_id_at`;
-- reverse: create "webhook_attempts" table
DROP TABLE `webhook_attempts`;
-- reverse: create index "refund_payment_id_provider_refund_id" to table: "refunds"
DROP INDEX `refund_payment_id_provider_refund_id`;
-- reverse: create index "payment_provider_provider_payment_id" to table: "payments"
DROP INDEX `payment_provider_provider_payment_id`;
-- reverse: add column "dispute_reason" to table: "payments"
ALTER TABLE `payments` DROP COLUMN `dispute_reason`;
-- reverse: add column "disputed_at" to table: "payments"
ALTER TABLE `payments` DROP COLUMN `disputed_at`;
