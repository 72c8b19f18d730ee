-- disable the enforcement of foreign-keys constraints
PRAGMA foreign_keys = off;
-- drop "merchants" table: every row goes back to being the one business's
DROP INDEX `merchant_updated_at`;
DROP INDEX `merchant_created_at_id`;
DROP TABLE `merchants`;
-- create "new_refunds" table
CREATE TABLE `new_refunds` (`id` text NOT NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `amount` integer NOT NULL, `currency` text NOT NULL, `status` text NOT NULL, `reason` text NULL, `provider_refund_id` text NULL, `failure_code` text NULL, `payment_id` text NOT NULL, PRIMARY KEY (`id`), CONSTRAINT `refunds_payments_refunds` FOREIGN KEY (`payment_id`) REFERENCES `payments` (`id`) ON DELETE NO ACTION, CONSTRAINT `refund_amount_positive` CHECK (amount > 0), CONSTRAINT `refund_status_known` CHECK (status IN ('pending', 'succeeded', 'failed')));
-- copy rows from old table "refunds" to new temporary table "new_refunds"
INSERT INTO `new_refunds` (`id`, `created_at`, `updated_at`, `amount`, `currency`, `status`, `reason`, `provider_refund_id`, `failure_code`, `payment_id`) SELECT `id`, `created_at`, `updated_at`, `amount`, `currency`, `status`, `reason`, `provider_refund_id`, `failure_code`, `payment_id` FROM `refunds`;
-- drop "refunds" table after copying rows
DROP TABLE `refunds`;
-- rename temporary table "new_refunds" to "refunds"
ALTER TABLE `new_refunds` RENAME TO `refunds`;
-- create index "refund_payment_id_status" to table: "refunds"
CREATE INDEX `refund_payment_id_status` ON `refunds` (`payment_id`, `status`);
-- create index "refund_status_created_at" to table: "refunds"
CREATE INDEX `refund_status_created_at` ON `refunds` (`status`, `created_at`);
-- create index "refund_payment_id_provider_refund_id" to table: "refunds"
CREATE UNIQUE INDEX `refund_payment_id_provider_refund_id` ON `refunds` (`payment_id`, `provider_refund_id`);
-- create "new_idempotency_keys" table
CREATE TABLE `new_idempotency_keys` (`id` text NOT NULL, `principal` text NOT NULL, `key` text NOT NULL, `request_hash` text NOT NULL, `resource_id` text NULL, `settled_at` datetime NULL, `error_code` text NULL, `error_message` text NULL, `error_param` text NULL, `expires_at` datetime NOT NULL, `created_at` datetime NOT NULL, PRIMARY KEY (`id`));
-- copy rows from old table "idempotency_keys" to new temporary table "new_idempotency_keys"
INSERT INTO `new_idempotency_keys` (`id`, `principal`, `key`, `request_hash`, `resource_id`, `settled_at`, `error_code`, `error_message`, `error_param`, `expires_at`, `created_at`) SELECT `id`, `principal`, `key`, `request_hash`, `resource_id`, `settled_at`, `error_code`, `error_message`, `error_param`, `expires_at`, `created_at` FROM `idempotency_keys`;
-- drop "idempotency_keys" table after copying rows
DROP TABLE `idempotency_keys`;
-- rename temporary table "new_idempotency_keys" to "idempotency_keys"
ALTER TABLE `new_idempotency_keys` RENAME TO `idempotency_keys`;
-- create index "idempotencykey_principal_key" to table: "idempotency_keys"
CREATE UNIQUE INDEX `idempotencykey_principal_key` ON `idempotency_keys` (`principal`, `key`);
-- create index "idempotencykey_expires_at" to table: "idempotency_keys"
CREATE INDEX `idempotencykey_expires_at` ON `idempotency_keys` (`expires_at`);
-- create index "idempotencykey_resource_id" to table: "idempotency_keys"
CREATE INDEX `idempotencykey_resource_id` ON `idempotency_keys` (`resource_id`);
-- create "new_users" table
CREATE TABLE `new_users` (`id` text NOT NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `email` text NOT NULL, `password_hash` text NOT NULL, `role` text NOT NULL, `disabled` bool NOT NULL DEFAULT (false), PRIMARY KEY (`id`));
-- copy rows from old table "users" to new temporary table "new_users"
INSERT INTO `new_users` (`id`, `created_at`, `updated_at`, `email`, `password_hash`, `role`, `disabled`) SELECT `id`, `created_at`, `updated_at`, `email`, `password_hash`, `role`, `disabled` FROM `users`;
-- drop "users" table after copying rows
DROP TABLE `users`;
-- rename temporary table "new_users" to "users"
ALTER TABLE `new_users` RENAME TO `users`;
-- create index "users_email_key" to table: "users"
CREATE UNIQUE INDEX `users_email_key` ON `users` (`email`);
-- create "new_api_keys" table
CREATE TABLE `new_api_keys` (`id` text NOT NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `name` text NOT NULL, `key_hash` text NOT NULL, `prefix` text NOT NULL, `scopes` json NOT NULL, `expires_at` datetime NULL, `revoked_at` datetime NULL, `last_used_at` datetime NULL, `user_id` text NOT NULL, PRIMARY KEY (`id`), CONSTRAINT `api_keys_users_api_keys` FOREIGN KEY (`user_id`) REFERENCES `users` (`id`) ON DELETE NO ACTION);
-- copy rows from old table "api_keys" to new temporary table "new_api_keys"
INSERT INTO `new_api_keys` (`id`, `created_at`, `updated_at`, `name`, `key_hash`, `prefix`, `scopes`, `expires_at`, `revoked_at`, `last_used_at`, `user_id`) SELECT `id`, `created_at`, `updated_at`, `name`, `key_hash`, `prefix`, `scopes`, `expires_at`, `revoked_at`, `last_used_at`, `user_id` FROM `api_keys`;
-- drop "api_keys" table after copying rows
DROP TABLE `api_keys`;
-- rename temporary table "new_api_keys" to "api_keys"
ALTER TABLE `new_api_keys` RENAME TO `api_keys`;
-- create index "api_keys_key_hash_key" to table: "api_keys"
CREATE UNIQUE INDEX `api_keys_key_hash_key` ON `api_keys` (`key_hash`);
-- create index "apikey_user_id" to table: "api_keys"
CREATE INDEX `apikey_user_id` ON `api_keys` (`user_id`);
-- create "new_payments" table
CREATE TABLE `new_payments` (`id` text NOT NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `amount` integer NOT NULL, `currency` text NOT NULL, `status` text NOT NULL, `payment_method` text NOT NULL, `customer_email` text NOT NULL, `customer_name` text NOT NULL DEFAULT (''), `card_brand` text NOT NULL, `card_last4` text NOT NULL, `card_exp_month` integer NOT NULL, `card_exp_year` integer NOT NULL, `card_fingerprint` text NOT NULL, `provider` text NOT NULL, `provider_payment_id` text NULL, `provider_decline_code` text NULL, `routing` json NULL, `amount_refunded` integer NOT NULL DEFAULT (0), `capture_method` text NOT NULL DEFAULT ('automatic'), `amount_capturable` integer NOT NULL DEFAULT (0), `amount_captured` integer NOT NULL DEFAULT (0), `capture_before` datetime NULL, `canceled_at` datetime NULL, `cancellation_reason` text NULL, `pending_action` text NULL, `capture_requested` integer NULL, `failure_code` text NULL, `failure_message` text NULL, `description` text NULL, `disputed_at` datetime NULL, `dispute_reason` text NULL, `metadata` json NULL, `return_url` text NULL, `next_action_url` text NULL, `authenticate_before` datetime NULL, PRIMARY KEY (`id`), CONSTRAINT `payment_amount_positive` CHECK (amount > 0), CONSTRAINT `payment_capture_within_amount` CHECK (amount_captured >= 0 AND amount_captured <= amount AND amount_capturable >= 0 AND amount_capturable <= amount), CONSTRAINT `payment_refund_within_amount` CHECK (amount_refunded >= 0 AND amount_refunded <= amount), CONSTRAINT `payment_status_known` CHECK (status IN ('pending', 'processing', 'requires_action', 'requires_capture', 'succeeded', 'failed', 'canceled', 'partially_refunded', 'refunded')));
-- copy rows from old table "payments" to new temporary table "new_payments"
INSERT INTO `new_payments` (`id`, `created_at`, `updated_at`, `amount`, `currency`, `status`, `payment_method`, `customer_email`, `customer_name`, `card_brand`, `card_last4`, `card_exp_month`, `card_exp_year`, `card_fingerprint`, `provider`, `provider_payment_id`, `provider_decline_code`, `routing`, `amount_refunded`, `capture_method`, `amount_capturable`, `amount_captured`, `capture_before`, `canceled_at`, `cancellation_reason`, `pending_action`, `capture_requested`, `return_url`, `next_action_url`, `authenticate_before`, `failure_code`, `failure_message`, `description`, `disputed_at`, `dispute_reason`, `metadata`) SELECT `id`, `created_at`, `updated_at`, `amount`, `currency`, `status`, `payment_method`, `customer_email`, `customer_name`, `card_brand`, `card_last4`, `card_exp_month`, `card_exp_year`, `card_fingerprint`, `provider`, `provider_payment_id`, `provider_decline_code`, `routing`, `amount_refunded`, `capture_method`, `amount_capturable`, `amount_captured`, `capture_before`, `canceled_at`, `cancellation_reason`, `pending_action`, `capture_requested`, `return_url`, `next_action_url`, `authenticate_before`, `failure_code`, `failure_message`, `description`, `disputed_at`, `dispute_reason`, `metadata` FROM `payments`;
-- drop "payments" table after copying rows
DROP TABLE `payments`;
-- rename temporary table "new_payments" to "payments"
ALTER TABLE `new_payments` RENAME TO `payments`;
-- create index "payment_created_at_id" to table: "payments"
CREATE INDEX `payment_created_at_id` ON `payments` (`created_at`, `id`);
-- create index "payment_status_created_at" to table: "payments"
CREATE INDEX `payment_status_created_at` ON `payments` (`status`, `created_at`);
-- create index "payment_customer_email_created_at" to table: "payments"
CREATE INDEX `payment_customer_email_created_at` ON `payments` (`customer_email`, `created_at`);
-- create index "payment_provider_provider_payment_id" to table: "payments"
CREATE INDEX `payment_provider_provider_payment_id` ON `payments` (`provider`, `provider_payment_id`);
-- create index "payment_status_capture_before" to table: "payments"
CREATE INDEX `payment_status_capture_before` ON `payments` (`status`, `capture_before`);
-- create "new_payment_status_changes" table
CREATE TABLE `new_payment_status_changes` (`id` text NOT NULL, `from` text NULL, `to` text NOT NULL, `reason` text NOT NULL DEFAULT (''), `actor` text NOT NULL DEFAULT ('system'), `at` datetime NOT NULL, `payment_id` text NOT NULL, PRIMARY KEY (`id`), CONSTRAINT `payment_status_changes_payments_status_history` FOREIGN KEY (`payment_id`) REFERENCES `payments` (`id`) ON DELETE NO ACTION, CONSTRAINT `status_change_statuses_known` CHECK ("to" IN ('pending', 'processing', 'requires_action', 'requires_capture', 'succeeded', 'failed', 'canceled', 'partially_refunded', 'refunded') AND ("from" IS NULL OR "from" IN ('pending', 'processing', 'requires_action', 'requires_capture', 'succeeded', 'failed', 'canceled', 'partially_refunded', 'refunded'))));
-- copy rows from old table "payment_status_changes" to new temporary table "new_payment_status_changes"
INSERT INTO `new_payment_status_changes` (`id`, `from`, `to`, `reason`, `actor`, `at`, `payment_id`) SELECT `id`, `from`, `to`, `reason`, `actor`, `at`, `payment_id` FROM `payment_status_changes`;
-- drop "payment_status_changes" table after copying rows
DROP TABLE `payment_status_changes`;
-- rename temporary table "new_payment_status_changes" to "payment_status_changes"
ALTER TABLE `new_payment_status_changes` RENAME TO `payment_status_changes`;
-- create index "paymentstatuschange_payment_id_at" to table: "payment_status_changes"
CREATE INDEX `paymentstatuschange_payment_id_at` ON `payment_status_changes` (`payment_id`, `at`);
-- create "new_events" table
CREATE TABLE `new_events` (`id` text NOT NULL, `type` text NOT NULL, `object_id` text NOT NULL, `body` blob NOT NULL, `fanned_out` bool NOT NULL DEFAULT (false), `created_at` datetime NOT NULL, PRIMARY KEY (`id`));
-- copy rows from old table "events" to new temporary table "new_events"
INSERT INTO `new_events` (`id`, `type`, `object_id`, `body`, `fanned_out`, `created_at`) SELECT `id`, `type`, `object_id`, `body`, `fanned_out`, `created_at` FROM `events`;
-- drop "events" table after copying rows
DROP TABLE `events`;
-- rename temporary table "new_events" to "events"
ALTER TABLE `new_events` RENAME TO `events`;
-- create index "event_created_at_id" to table: "events"
CREATE INDEX `event_created_at_id` ON `events` (`created_at`, `id`);
-- create index "event_type_created_at" to table: "events"
CREATE INDEX `event_type_created_at` ON `events` (`type`, `created_at`);
-- create index "event_object_id" to table: "events"
CREATE INDEX `event_object_id` ON `events` (`object_id`);
-- create index "event_fanned_out_created_at" to table: "events"
CREATE INDEX `event_fanned_out_created_at` ON `events` (`fanned_out`, `created_at`);
-- create "new_webhook_deliveries" table
CREATE TABLE `new_webhook_deliveries` (`id` text NOT NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `event_id` text NOT NULL, `type` text NOT NULL, `test_body` blob NULL, `status` text NOT NULL DEFAULT ('pending'), `attempts` integer NOT NULL DEFAULT (0), `next_attempt_at` datetime NULL, `last_status_code` integer NULL, `last_error` text NULL, `latency_ms` integer NULL, `delivered_at` datetime NULL, `endpoint_id` text NOT NULL, PRIMARY KEY (`id`), CONSTRAINT `webhook_deliveries_webhook_endpoints_deliveries` FOREIGN KEY (`endpoint_id`) REFERENCES `webhook_endpoints` (`id`) ON DELETE CASCADE, CONSTRAINT `webhook_delivery_status_known` CHECK (status IN ('pending', 'delivered', 'failed')));
-- copy rows from old table "webhook_deliveries" to new temporary table "new_webhook_deliveries"
INSERT INTO `new_webhook_deliveries` (`id`, `created_at`, `updated_at`, `event_id`, `type`, `test_body`, `status`, `attempts`, `next_attempt_at`, `last_status_code`, `last_error`, `latency_ms`, `delivered_at`, `endpoint_id`) SELECT `id`, `created_at`, `updated_at`, `event_id`, `type`, `test_body`, `status`, `attempts`, `next_attempt_at`, `last_status_code`, `last_error`, `latency_ms`, `delivered_at`, `endpoint_id` FROM `webhook_deliveries`;
-- drop "webhook_deliveries" table after copying rows
DROP TABLE `webhook_deliveries`;
-- rename temporary table "new_webhook_deliveries" to "webhook_deliveries"
ALTER TABLE `new_webhook_deliveries` RENAME TO `webhook_deliveries`;
-- create index "webhookdelivery_endpoint_id_event_id" to table: "webhook_deliveries"
CREATE UNIQUE INDEX `webhookdelivery_endpoint_id_event_id` ON `webhook_deliveries` (`endpoint_id`, `event_id`);
-- create index "webhookdelivery_status_next_attempt_at" to table: "webhook_deliveries"
CREATE INDEX `webhookdelivery_status_next_attempt_at` ON `webhook_deliveries` (`status`, `next_attempt_at`);
-- create index "webhookdelivery_endpoint_id_created_at_id" to table: "webhook_deliveries"
CREATE INDEX `webhookdelivery_endpoint_id_created_at_id` ON `webhook_deliveries` (`endpoint_id`, `created_at`, `id`);
-- create index "webhookdelivery_created_at" to table: "webhook_deliveries"
CREATE INDEX `webhookdelivery_created_at` ON `webhook_deliveries` (`created_at`);
-- create "new_webhook_delivery_attempts" table
CREATE TABLE `new_webhook_delivery_attempts` (`id` text NOT NULL, `at` datetime NOT NULL, `status_code` integer NULL, `latency_ms` integer NOT NULL, `error` text NULL, `delivery_id` text NOT NULL, PRIMARY KEY (`id`), CONSTRAINT `webhook_delivery_attempts_webhook_deliveries_attempt_log` FOREIGN KEY (`delivery_id`) REFERENCES `webhook_deliveries` (`id`) ON DELETE CASCADE);
-- copy rows from old table "webhook_delivery_attempts" to new temporary table "new_webhook_delivery_attempts"
INSERT INTO `new_webhook_delivery_attempts` (`id`, `at`, `status_code`, `latency_ms`, `error`, `delivery_id`) SELECT `id`, `at`, `status_code`, `latency_ms`, `error`, `delivery_id` FROM `webhook_delivery_attempts`;
-- drop "webhook_delivery_attempts" table after copying rows
DROP TABLE `webhook_delivery_attempts`;
-- rename temporary table "new_webhook_delivery_attempts" to "webhook_delivery_attempts"
ALTER TABLE `new_webhook_delivery_attempts` RENAME TO `webhook_delivery_attempts`;
-- create index "webhookdeliveryattempt_delivery_id_at" to table: "webhook_delivery_attempts"
CREATE INDEX `webhookdeliveryattempt_delivery_id_at` ON `webhook_delivery_attempts` (`delivery_id`, `at`);
-- create "new_webhook_endpoints" table
CREATE TABLE `new_webhook_endpoints` (`id` text NOT NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `url` text NOT NULL, `events` json NOT NULL, `description` text NULL, `status` text NOT NULL DEFAULT ('enabled'), `disabled_reason` text NULL, `secret` text NOT NULL, `previous_secret` text NULL, `previous_secret_expires_at` datetime NULL, `failing_since` datetime NULL, `created_by` text NOT NULL, PRIMARY KEY (`id`), CONSTRAINT `webhook_endpoint_status_known` CHECK (status IN ('enabled', 'disabled')));
-- copy rows from old table "webhook_endpoints" to new temporary table "new_webhook_endpoints"
INSERT INTO `new_webhook_endpoints` (`id`, `created_at`, `updated_at`, `url`, `events`, `description`, `status`, `disabled_reason`, `secret`, `previous_secret`, `previous_secret_expires_at`, `failing_since`, `created_by`) SELECT `id`, `created_at`, `updated_at`, `url`, `events`, `description`, `status`, `disabled_reason`, `secret`, `previous_secret`, `previous_secret_expires_at`, `failing_since`, `created_by` FROM `webhook_endpoints`;
-- drop "webhook_endpoints" table after copying rows
DROP TABLE `webhook_endpoints`;
-- rename temporary table "new_webhook_endpoints" to "webhook_endpoints"
ALTER TABLE `new_webhook_endpoints` RENAME TO `webhook_endpoints`;
-- create index "webhookendpoint_created_at_id" to table: "webhook_endpoints"
CREATE INDEX `webhookendpoint_created_at_id` ON `webhook_endpoints` (`created_at`, `id`);
-- enable back the enforcement of foreign-keys constraints
PRAGMA foreign_keys = on;
