-- reverse: rebuild "idempotency_keys" with its former columns; keys keep no answer and count as held
PRAGMA foreign_keys = off;
CREATE TABLE `old_idempotency_keys` (`id` text NOT NULL, `principal` text NOT NULL, `key` text NOT NULL, `request_hash` text NOT NULL, `locked_at` datetime NULL, `response_status` integer NULL, `response_body` blob NULL, `expires_at` datetime NOT NULL, `created_at` datetime NOT NULL, PRIMARY KEY (`id`));
INSERT INTO `old_idempotency_keys` (`id`, `principal`, `key`, `request_hash`, `expires_at`, `created_at`) SELECT `id`, `principal`, `key`, `request_hash`, `expires_at`, `created_at` FROM `idempotency_keys`;
DROP TABLE `idempotency_keys`;
ALTER TABLE `old_idempotency_keys` RENAME TO `idempotency_keys`;
CREATE UNIQUE INDEX `idempotencykey_principal_key` ON `idempotency_keys` (`principal`, `key`);
CREATE INDEX `idempotencykey_expires_at` ON `idempotency_keys` (`expires_at`);
PRAGMA foreign_keys = on;
