-- reverse: rebuild "payment_status_changes" without the "status_change_statuses_known" check
PRAGMA foreign_keys = off;
CREATE TABLE `old_payment_status_changes` (`id` text NOT NULL, `from` text NULL, `to` text NOT NULL, `reason` text NOT NULL DEFAULT (''), `actor` text NOT NULL DEFAULT ('system'), `at` datetime NOT NULL, `payment_id` text NOT NULL, PRIMARY KEY (`id`), CONSTRAINT `payment_status_changes_payments_status_history` FOREIGN KEY (`payment_id`) REFERENCES `payments` (`id`) ON DELETE NO ACTION);
INSERT INTO `old_payment_status_changes` (`id`, `from`, `to`, `reason`, `actor`, `at`, `payment_id`) SELECT `id`, `from`, `to`, `reason`, `actor`, `at`, `payment_id` FROM `payment_status_changes`;
DROP TABLE `payment_status_changes`;
ALTER TABLE `old_payment_status_changes` RENAME TO `payment_status_changes`;
CREATE INDEX `paymentstatuschange_payment_id_at` ON `payment_status_changes` (`payment_id`, `at`);
PRAGMA foreign_keys = on;
