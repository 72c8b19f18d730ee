-- disable the enforcement of foreign-keys constraints
PRAGMA foreign_keys = off;
-- create "new_idempotency_keys" table
CREATE TABLE `new_idempotency_keys` (`id` text NOT NULL, `principal` text NOT NULL, `key` text NOT NULL, `request_hash` text NOT NULL, `resource_id` text NULL, `settled_at` datetime NULL, `error_code` text NULL, `error_message` text NULL, `error_param` text NULL, `expires_at` datetime NOT NULL, `created_at` datetime NOT NULL, PRIMARY KEY (`id`));
-- copy rows from old table "idempotency_keys" to new temporary table "new_idempotency_keys"
INSERT INTO `new_idempotency_keys` (`id`, `principal`, `key`, `request_hash`, `expires_at`, `created_at`) SELECT `id`, `principal`, `key`, `request_hash`, `expires_at`, `created_at` FROM `idempotency_keys`;
-- drop "idempotency_keys" table after copying rows
DROP TABLE `idempotency_keys`;
-- rename temporary table "new_idempotency_keys" to "idempotency_keys"
ALTER TABLE `new_idempotency_keys` RENAME TO `idempotency_keys`;
-- create index "idempotencykey_principal_key" to table: "idempotency_keys"
CREATE UNIQUE INDEX `idempotencykey_principal_key` ON `idempotency_keys` (`principal`, `key`);
-- create index "idempotencykey_expires_at" to table: "idempotency_keys"
CREATE INDEX `idempotencykey_expires_at` ON `idempotency_keys` (`expires_at`);
-- enable back the enforcement of foreign-keys constraints
PRAGMA foreign_keys = on;
