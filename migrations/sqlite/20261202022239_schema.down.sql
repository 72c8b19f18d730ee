-- disable the enforcement of foreign-keys constraints
PRAGMA foreign_keys = off;
-- create "new_payments" table, as it was before the return secret and the reversal of late approvals
CREATE TABLE `new_payments` (`id` text NOT NULL, `merchant_id` text NOT NULL DEFAULT ('mer_00000000000000000000000000'), `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `amount` integer NOT NULL, `currency` text NOT NULL, `status` text NOT NULL, `payment_method` text NOT NULL, `customer_email` text NOT NULL, `customer_name` text NOT NULL DEFAULT (''), `card_brand` text NOT NULL, `card_last4` text NOT NULL, `card_exp_month` integer NOT NULL, `card_exp_year` integer NOT NULL, `card_fingerprint` text NOT NULL, `provider` text NOT NULL, `provider_payment_id` text NULL, `provider_decline_code` text NULL, `routing` json NULL, `amount_refunded` integer NOT NULL DEFAULT (0), `capture_method` text NOT NULL DEFAULT ('automatic'), `amount_capturable` integer NOT NULL DEFAULT (0), `amount_captured` integer NOT NULL DEFAULT (0), `capture_before` datetime NULL, `canceled_at` datetime NULL, `cancellation_reason` text NULL, `pending_action` text NULL, `capture_requested` integer NULL, `return_url` text NULL, `next_action_url` text NULL, `authenticate_before` datetime NULL, `failure_code` text NULL, `failure_message` text NULL, `description` text NULL, `disputed_at` datetime NULL, `dispute_reason` text NULL, `metadata` json NULL, PRIMARY KEY (`id`), CONSTRAINT `payment_amount_positive` CHECK (amount > 0), CONSTRAINT `payment_capture_within_amount` CHECK (amount_captured >= 0 AND amount_captured <= amount AND amount_capturable >= 0 AND amount_capturable <= amount), CONSTRAINT `payment_refund_within_amount` CHECK (amount_refunded >= 0 AND amount_refunded <= amount), CONSTRAINT `payment_status_known` CHECK (status IN ('pending', 'processing', 'requires_action', 'requires_capture', 'succeeded', 'failed', 'canceled', 'partially_refunded', 'refunded')));
-- copy rows from "payments" to "new_payments"
INSERT INTO `new_payments` (`id`, `merchant_id`, `created_at`, `updated_at`, `amount`, `currency`, `status`, `payment_method`, `customer_email`, `customer_name`, `card_brand`, `card_last4`, `card_exp_month`, `card_exp_year`, `card_fingerprint`, `provider`, `provider_payment_id`, `provider_decline_code`, `routing`, `amount_refunded`, `capture_method`, `amount_capturable`, `amount_captured`, `capture_before`, `canceled_at`, `cancellation_reason`, `pending_action`, `capture_requested`, `return_url`, `next_action_url`, `authenticate_before`, `failure_code`, `failure_message`, `description`, `disputed_at`, `dispute_reason`, `metadata`) SELECT `id`, `merchant_id`, `created_at`, `updated_at`, `amount`, `currency`, `status`, `payment_method`, `customer_email`, `customer_name`, `card_brand`, `card_last4`, `card_exp_month`, `card_exp_year`, `card_fingerprint`, `provider`, `provider_payment_id`, `provider_decline_code`, `routing`, `amount_refunded`, `capture_method`, `amount_capturable`, `amount_captured`, `capture_before`, `canceled_at`, `cancellation_reason`, `pending_action`, `capture_requested`, `return_url`, `next_action_url`, `authenticate_before`, `failure_code`, `failure_message`, `description`, `disputed_at`, `dispute_reason`, `metadata` FROM `payments`;
-- drop "payments" table after copying rows
DROP TABLE `payments`;
-- rename temporary table "new_payments" to "payments"
ALTER TABLE `new_payments` RENAME TO `payments`;
-- create index "payment_created_at_id" to table: "payments"
CREATE INDEX `payment_created_at_id` ON `payments` (`created_at`, `id`);
-- create index "payment_customer_email_created_at" to table: "payments"
CREATE INDEX `payment_customer_email_created_at` ON `payments` (`customer_email`, `created_at`);
-- create index "payment_merchant_id_created_at_id" to table: "payments"
CREATE INDEX `payment_merchant_id_created_at_id` ON `payments` (`merchant_id`, `created_at`, `id`);
-- create index "payment_provider_provider_payment_id" to table: "payments"
CREATE INDEX `payment_provider_provider_payment_id` ON `payments` (`provider`, `provider_payment_id`);
-- create index "payment_status_capture_before" to table: "payments"
CREATE INDEX `payment_status_capture_before` ON `payments` (`status`, `capture_before`);
-- create index "payment_status_created_at" to table: "payments"
CREATE INDEX `payment_status_created_at` ON `payments` (`status`, `created_at`);
-- enable back the enforcement of foreign-keys constraints
PRAGMA foreign_keys = on;
