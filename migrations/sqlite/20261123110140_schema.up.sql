-- disable the enforcement of foreign-keys constraints
PRAGMA foreign_keys = off;
-- create "new_payment_status_changes" table
CREATE TABLE `new_payment_status_changes` (`id` text NOT NULL, `from` text NULL, `to` text NOT NULL, `reason` text NOT NULL DEFAULT (''), `actor` text NOT NULL DEFAULT ('system'), `at` datetime NOT NULL, `payment_id` text NOT NULL, PRIMARY KEY (`id`), CONSTRAINT `payment_status_changes_payments_status_history` FOREIGN KEY (`payment_id`) REFERENCES `payments` (`id`) ON DELETE NO ACTION, CONSTRAINT `status_change_statuses_known` CHECK ("to" IN ('pending', 'processing', 'succeeded', 'failed', 'partially_refunded', 'refunded') AND ("from" IS NULL OR "from" IN ('pending', 'processing', 'succeeded', 'failed', 'partially_refunded', 'refunded'))));
-- copy rows from old table "payment_status_changes" to new temporary table "new_payment_status_changes"
INSERT INTO `new_payment_status_changes` (`id`, `from`, `to`, `reason`, `actor`, `at`, `payment_id`) SELECT `id`, `from`, `to`, `reason`, `actor`, `at`, `payment_id` FROM `payment_status_changes`;
-- drop "payment_status_changes" table after copying rows
DROP TABLE `payment_status_changes`;
-- rename temporary table "new_payment_status_changes" to "payment_status_changes"
ALTER TABLE `new_payment_status_changes` RENAME TO `payment_status_changes`;
-- create index "paymentstatuschange_payment_id_at" to table: "payment_status_changes"
CREATE INDEX `paymentstatuschange_payment_id_at` ON `payment_status_changes` (`payment_id`, `at`);
-- enable back the enforcement of foreign-keys constraints
PRAGMA foreign_keys = on;
