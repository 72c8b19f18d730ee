-- add column "disputed_at" to table: "payments"
ALTER TABLE `payments` ADD COLUMN `disputed_at` datetime NULL;
-- add column "dispute_reason" to table: "payments"
ALTER TABLE `payments` ADD COLUMN `dispute_reason` text NULL;
-- create index "payment_provider_provider_payment_id" to table: "payments"
CREATE INDEX `payment_provider_provider_payment_id` ON `payments` (`provider`, `provider_payment_id`);
-- create index "refund_payment_id_provider_refund_id" to table: "refunds"
CREATE UNIQUE INDEX `refund_payment_id_provider_refund_id` ON `refunds` (`payment_id`, `provider_refund_id`);
-- create "webhook_attempts" table
CREATE TABLE `webhook_attempts` (`id` text NOT NULL, `at` datetime NOT NULL, `status` text NOT NULL, `error` text NULL, `duration_ms` integer NOT NULL, `event_id` text NOT NULL, PRIMARY KEY (`id`), CONSTRAINT `webhook_attempts_webhook_events_attempt_log` FOREIGN KEY (`event_id`) REFERENCES `webhook_events` (`id`) ON DELETE CASCADE, CONSTRAINT `webhook_attempt_status_known` CHECK (status IN ('received', 'processed', 'ignored', 'failed', 'dead')));
-- create index "webhookattempt_event_id_at" to table: "webhook_attempts"
CREATE INDEX `webhookattempt_event_id_at` ON `webhook_attempts` (`event_id`, `at`);
-- create "webhook_events" table
CREATE TABLE `webhook_events` (`id` text NOT NULL, `provider` text NOT NULL, `event_id` text NOT NULL, `type` text NOT NULL, `status` text NOT NULL, `payload` blob NOT NULL, `attempts` integer NOT NULL DEFAULT (0), `next_attempt_at` datetime NULL, `last_error` text NULL, `ignored_reason` text NULL, `payment_id` text NULL, `received_at` datetime NOT NULL, `processed_at` datetime NULL, PRIMARY KEY (`id`), CONSTRAINT `webhook_event_status_known` CHECK (status IN ('received', 'processed', 'ignored', 'failed', 'dead')));
-- create index "webhookevent_provider_event_id" to table: "webhook_events"
CREATE UNIQUE INDEX `webhookevent_provider_event_id` ON `webhook_events` (`provider`, `event_id`);
-- create index "webhookevent_status_next_attempt_at" to table: "webhook_events"
CREATE INDEX `webhookevent_status_next_attempt_at` ON `webhook_events` (`status`, `next_attempt_at`);
-- create index "webhookevent_received_at_id" to table: "webhook_events"
CREATE INDEX `webhookevent_received_at_id` ON `webhook_events` (`received_at`, `id`);
-- create index "webhookevent_provider_received_at" to table: "webhook_events"
CREATE INDEX `webhookevent_provider_received_at` ON `webhook_events` (`provider`, `received_at`);
