-- create "payments" table
CREATE TABLE `payments` (`id` text NOT NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `amount` integer NOT NULL, `currency` text NOT NULL, `status` text NOT NULL, `payment_method` text NOT NULL, `customer_email` text NOT NULL, `customer_name` text NOT NULL DEFAULT (''), `card_brand` text NOT NULL, `card_last4` text NOT NULL, `card_exp_month` integer NOT NULL, `card_exp_year` integer NOT NULL, `card_fingerprint` text NOT NULL, `provider` text NOT NULL, `provider_payment_id` text NULL, `amount_refunded` integer NOT NULL DEFAULT (0), `failure_code` text NULL, `failure_message` text NULL, `description` text NULL, `metadata` json NULL, PRIMARY KEY (`id`), CONSTRAINT `payment_amount_positive` CHECK (amount > 0), CONSTRAINT `payment_refund_within_amount` CHECK (amount_refunded >= 0 AND amount_refunded <= amount), CONSTRAINT `payment_status_known` CHECK (status IN ('pending', 'processing', 'succeeded', 'failed', 'partially_refunded', 'refunded')));
-- create index "payment_created_at_id" to table: "payments"
CREATE INDEX `payment_created_at_id` ON `payments` (`created_at`, `id`);
-- create index "payment_status_created_at" to table: "payments"
CREATE INDEX `payment_status_created_at` ON `payments` (`status`, `created_at`);
-- create index "payment_customer_email_created_at" to table: "payments"
CREATE INDEX `payment_customer_email_created_at` ON `payments` (`customer_email`, `created_at`);
-- create "refresh_tokens" table
CREATE TABLE `refresh_tokens` (`id` text NOT NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `token_hash` text NOT NULL, `family` text NOT NULL, `expires_at` datetime NOT NULL, `used_at` datetime NULL, `revoked_at` datetime NULL, `user_id` text NOT NULL, PRIMARY KEY (`id`), CONSTRAINT `refresh_tokens_users_refresh_tokens` FOREIGN KEY (`user_id`) REFERENCES `users` (`id`) ON DELETE NO ACTION);
-- create index "refresh_tokens_token_hash_key" to table: "refresh_tokens"
CREATE UNIQUE INDEX `refresh_tokens_token_hash_key` ON `refresh_tokens` (`token_hash`);
-- create index "refreshtoken_family" to table: "refresh_tokens"
CREATE INDEX `refreshtoken_family` ON `refresh_tokens` (`family`);
-- create "users" table
CREATE TABLE `users` (`id` text NOT NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `email` text NOT NULL, `password_hash` text NOT NULL, `role` text NOT NULL, PRIMARY KEY (`id`));
-- create index "users_email_key" to table: "users"
CREATE UNIQUE INDEX `users_email_key` ON `users` (`email`);
