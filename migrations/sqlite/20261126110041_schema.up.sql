-- create "events" table
CREATE TABLE `events` (`id` text NOT NULL, `type` text NOT NULL, `object_id` text NOT NULL, `body` blob NOT NULL, `fanned_out` bool NOT NULL DEFAULT (false), `created_at` datetime NOT NULL, PRIMARY KEY (`id`));
-- create index "event_created_at_id" to table: "events"
CREATE INDEX `event_created_at_id` ON `events` (`created_at`, `id`);
-- create index "event_type_created_at" to table: "events"
CREATE INDEX `event_type_created_at` ON `events` (`type`, `created_at`);
-- create index "event_object_id" to table: "events"
CREATE INDEX `event_object_id` ON `events` (`object_id`);
-- create index "event_fanned_out_created_at" to table: "events"
CREATE INDEX `event_fanned_out_created_at` ON `events` (`fanned_out`, `created_at`);
-- create "webhook_deliveries" table
CREATE TABLE `webhook_deliveries` (`id` text NOT NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `event_id` text NOT NULL, `type` text NOT NULL, `test_body` blob NULL, `status` text NOT NULL DEFAULT ('pending'), `attempts` integer NOT NULL DEFAULT (0), `next_attempt_at` datetime NULL, `last_status_code` integer NULL, `last_error` text NULL, `latency_ms` integer NULL, `delivered_at` datetime NULL, `endpoint_id` text NOT NULL, PRIMARY KEY (`id`), CONSTRAINT `webhook_deliveries_webhook_endpoints_deliveries` FOREIGN KEY (`endpoint_id`) REFERENCES `webhook_endpoints` (`id`) ON DELETE CASCADE, CONSTRAINT `webhook_delivery_status_known` CHECK (status IN ('pending', 'delivered', 'failed')));
-- create index "webhookdelivery_endpoint_id_event_id" to table: "webhook_deliveries"
CREATE UNIQUE INDEX `webhookdelivery_endpoint_id_event_id` ON `webhook_deliveries` (`endpoint_id`, `event_id`);
-- create index "webhookdelivery_status_next_attempt_at" to table: "webhook_deliveries"
CREATE INDEX `webhookdelivery_status_next_attempt_at` ON `webhook_deliveries` (`status`, `next_attempt_at`);
-- create index "webhookdelivery_endpoint_id_created_at_id" to table: "webhook_deliveries"
CREATE INDEX `webhookdelivery_endpoint_id_created_at_id` ON `webhook_deliveries` (`endpoint_id`, `created_at`, `id`);
-- create index "webhookdelivery_created_at" to table: "webhook_deliveries"
CREATE INDEX `webhookdelivery_created_at` ON `webhook_deliveries` (`created_at`);
-- create "webhook_delivery_attempts" table
CREATE TABLE `webhook_delivery_attempts` (`id` text NOT NULL, `at` datetime NOT NULL, `status_code` integer NULL, `latency_ms` integer NOT NULL, `error` text NULL, `delivery_id` text NOT NULL, PRIMARY KEY (`id`), CONSTRAINT `webhook_delivery_attempts_webhook_deliveries_attempt_log` FOREIGN KEY (`delivery_id`) REFERENCES `webhook_deliveries` (`id`) ON DELETE CASCADE);
-- create index "webhookdeliveryattempt_delivery_id_at" to table: "webhook_delivery_attempts"
CREATE INDEX `webhookdeliveryattempt_delivery_id_at` ON `webhook_delivery_attempts` (`delivery_id`, `at`);
-- create "webhook_endpoints" table
CREATE TABLE `webhook_endpoints` (`id` text NOT NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `url` text NOT NULL, `events` json NOT NULL, `description` text NULL, `status` text NOT NULL DEFAULT ('enabled'), `disabled_reason` text NULL, `secret` text NOT NULL, `previous_secret` text NULL, `previous_secret_expires_at` datetime NULL, `failing_since` datetime NULL, `created_by` text NOT NULL, PRIMARY KEY (`id`), CONSTRAINT `webhook_endpoint_status_known` CHECK (status IN ('enabled', 'disabled')));
-- create index "webhookendpoint_created_at_id" to table: "webhook_endpoints"
CREATE INDEX `webhookendpoint_created_at_id` ON `webhook_endpoints` (`created_at`, `id`);
