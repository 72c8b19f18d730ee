-- create "idempotency_keys" table
CREATE TABLE `idempotency_keys` (`id` text NOT NULL, `principal` text NOT NULL, `key` text NOT NULL, `request_hash` text NOT NULL, `locked_at` datetime NULL, `response_status` integer NULL, `response_body` blob NULL, `expires_at` datetime NOT NULL, `created_at` datetime NOT NULL, PRIMARY KEY (`id`));
-- create index "idempotencykey_principal_key" to table: "idempotency_keys"
CREATE UNIQUE INDEX `idempotencykey_principal_key` ON `idempotency_keys` (`principal`, `key`);
-- create index "idempotencykey_expires_at" to table: "idempotency_keys"
CREATE INDEX `idempotencykey_expires_at` ON `idempotency_keys` (`expires_at`);
-- create "payment_status_changes" table
CREATE TABLE `payment_status_changes` (`id` text NOT NULL, `from` text NULL, `to` text NOT NULL, `reason` text NOT NULL DEFAULT (''), `actor` text NOT NULL DEFAULT ('system'), `at` datetime NOT NULL, `payment_id` text NOT NULL, PRIMARY KEY (`id`), CONSTRAINT `payment_status_changes_payments_status_history` FOREIGN KEY (`payment_id`) REFERENCES `payments` (`id`) ON DELETE NO ACTION);
-- create index "paymentstatuschange_payment_id_at" to table: "payment_status_changes"
CREATE INDEX `paymentstatuschange_payment_id_at` ON `payment_status_changes` (`payment_id`, `at`);
-- create "refunds" table
CREATE TABLE `refunds` (`id` text NOT NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `amount` integer NOT NULL, `currency` text NOT NULL, `status` text NOT NULL, `reason` text NULL, `provider_refund_id` text NULL, `failure_code` text NULL, `payment_id` text NOT NULL, PRIMARY KEY (`id`), CONSTRAINT `refunds_payments_refunds` FOREIGN KEY (`payment_id`) REFERENCES `payments` (`id`) ON DELETE NO ACTION, CONSTRAINT `refund_amount_positive` CHECK (amount > 0), CONSTRAINT `refund_status_known` CHECK (status IN ('pending', 'succeeded', 'failed')));
-- create index "refund_payment_id_status" to table: "refunds"
CREATE INDEX `refund_payment_id_status` ON `refunds` (`payment_id`, `status`);
