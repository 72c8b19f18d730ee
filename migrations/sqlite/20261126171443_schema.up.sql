-- disable the enforcement of foreign-keys constraints
PRAGMA foreign_keys = off;
-- create "new_api_keys" table
CREATE TABLE `new_api_keys` (`id` text NOT NULL, `merchant_id` text NOT NULL DEFAULT ('mer_00000000000000000000000000'), `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `name` text NOT NULL, `key_hash` text NOT NULL, `prefix` text NOT NULL, `scopes` json NOT NULL, `parent_id` text NULL, `expires_at` datetime NULL, `revoked_at` datetime NULL, `last_used_at` datetime NULL, `user_id` text NOT NULL, PRIMARY KEY (`id`), CONSTRAINT `api_keys_users_api_keys` FOREIGN KEY (`user_id`) REFERENCES `users` (`id`) ON DELETE NO ACTION);
-- copy rows from old table "api_keys" to new temporary table "new_api_keys"
INSERT INTO `new_api_keys` (`id`, `merchant_id`, `created_at`, `updated_at`, `name`, `key_hash`, `prefix`, `scopes`, `expires_at`, `revoked_at`, `last_used_at`, `user_id`) SELECT `id`, `merchant_id`, `created_at`, `updated_at`, `name`, `key_hash`, `prefix`, `scopes`, `expires_at`, `revoked_at`, `last_used_at`, `user_id` FROM `api_keys`;
-- drop "api_keys" table after copying rows
DROP TABLE `api_keys`;
-- rename temporary table "new_api_keys" to "api_keys"
ALTER TABLE `new_api_keys` RENAME TO `api_keys`;
-- create index "api_keys_key_hash_key" to table: "api_keys"
CREATE UNIQUE INDEX `api_keys_key_hash_key` ON `api_keys` (`key_hash`);
-- create index "apikey_user_id" to table: "api_keys"
CREATE INDEX `apikey_user_id` ON `api_keys` (`user_id`);
-- create index "apikey_parent_id" to table: "api_keys"
CREATE INDEX `apikey_parent_id` ON `api_keys` (`parent_id`);
-- enable back the enforcement of foreign-keys constraints
PRAGMA foreign_keys = on;
