-- reverse: rebuild "payments" and "payment_status_changes" with their former columns and status checks; payments in the new statuses cannot be kept by them
PRAGMA foreign_keys = off;
CREATE TABLE `old_payments` (`id` text NOT NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `amount` integer NOT NULL, `currency` text NOT NULL, `status` text NOT NULL, `payment_method` text NOT NULL, `customer_email` text NOT NULL, `customer_name` text NOT NULL DEFAULT (''), `card_brand` text NOT NULL, `card_last4` text NOT NULL, `card_exp_month` integer NOT NULL, `card_exp_year` integer NOT NULL, `card_fingerprint` text NOT NULL, `provider` text NOT NULL, `provider_payment_id` text NULL, `amount_refunded` integer NOT NULL DEFAULT (0), `failure_code` text NULL, `failure_message` text NULL, `description` text NULL, `metadata` json NULL, `provider_decline_code` text NULL, `routing` json NULL, `disputed_at` datetime NULL, `dispute_reason` text NULL, PRIMARY KEY (`id`), CONSTRAINT `payment_amount_positive` CHECK (amount > 0), CONSTRAINT `payment_refund_within_amount` CHECK (amount_refunded >= 0 AND amount_refunded <= amount), CONSTRAINT `payment_status_known` CHECK (status IN ('pending', 'processing', 'succeeded', 'failed', 'partially_refunded', 'refunded')));
INSERT INTO `old_payments` (`id`, `created_at`, `updated_at`, `amount`, `currency`, `status`, `payment_method`, `customer_email`, `customer_name`, `card_brand`, `card_last4`, `card_exp_month`, `card_exp_year`, `card_fingerprint`, `provider`, `provider_payment_id`, `amount_refunded`, `failure_code`, `failure_message`, `description`, `metadata`, `provider_decline_code`, `routing`, `disputed_at`, `dispute_reason`) SELECT `id`, `created_at`, `updated_at`, `amount`, `currency`, `status`, `payment_method`, `customer_email`, `customer_name`, `card_brand`, `card_last4`, `card_exp_month`, `card_exp_year`, `card_fingerprint`, `provider`, `provider_payment_id`, `amount_refunded`, `failure_code`, `failure_message`, `description`, `metadata`, `provider_decline_code`, `routing`, `disputed_at`, `dispute_reason` FROM `payments`;
DROP TABLE `payments`;
ALTER TABLE `old_payments` RENAME TO `payments`;
CREATE INDEX `payment_created_at_id` ON `payments` (`created_at`, `id`);
CREATE INDEX `payment_status_created_at` ON `payments` (`status`, `created_at`);
CREATE INDEX `payment_customer_email_created_at` ON `payments` (`customer_email`, `created_at`);
CREATE INDEX `payment_provider_provider_payment_id` ON `payments` (`provider`, `provider_payment_id`);
CREATE TABLE `old_payment_status_changes` (`id` text NOT NULL, `from` text NULL, `to` text NOT NULL, `reason` text NOT NULL DEFAULT (''), `actor` text NOT NULL DEFAULT ('system'), `at` datetime NOT NULL, `payment_id` text NOT NULL, PRIMARY KEY (`id`), CONSTRAINT `payment_status_changes_payments_status_history` FOREIGN KEY (`payment_id`) REFERENCES `payments` (`id`) ON DELETE NO ACTION, CONSTRAINT `status_change_statuses_known` CHECK ("to" IN ('pending', 'processing', 'succeeded', 'failed', 'partially_refunded', 'refunded') AND ("from" IS NULL OR "from" IN ('pending', 'processing', 'succeeded', 'failed', 'partially_refunded', 'refunded'))));
-- copy rows from old table "payment_status_changes" to new temporary table "old_payment_status_changes"
INSERT INTO `old_payment_status_changes` (`id`, `from`, `to`, `reason`, `actor`, `at`, `payment_id`) SELECT `id`, `from`, `to`, `reason`, `actor`, `at`, `payment_id` FROM `payment_status_changes`;
-- drop "payment_status_changes" table after copying rows
DROP TABLE `payment_status_changes`;
-- rename temporary table "old_payment_status_changes" to "payment_status_changes"
ALTER TABLE `old_payment_status_changes` RENAME TO `payment_status_changes`;
-- create index "paymentstatuschange_payment_id_at" to table: "payment_status_changes"
CREATE INDEX `paymentstatuschange_payment_id_at` ON `payment_status_changes` (`payment_id`, `at`);
ALTER TABLE `sandbox_objects` DROP COLUMN `captured`;
PRAGMA foreign_keys = on;
