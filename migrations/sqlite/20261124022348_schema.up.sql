-- create "api_keys" table
CREATE TABLE `api_keys` (`id` text NOT NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `name` text NOT NULL, `key_hash` text NOT NULL, `prefix` text NOT NULL, `scopes` json NOT NULL, `expires_at` datetime NULL, `revoked_at` datetime NULL, `last_used_at` datetime NULL, `user_id` text NOT NULL, PRIMARY KEY (`id`), CONSTRAINT `api_keys_users_api_keys` FOREIGN KEY (`user_id`) REFERENCES `users` (`id`) ON DELETE NO ACTION);
-- create index "api_keys_key_hash_key" to table: "api_keys"
CREATE UNIQUE INDEX `api_keys_key_hash_key` ON `api_keys` (`key_hash`);
-- create index "apikey_user_id" to table: "api_keys"
CREATE INDEX `apikey_user_id` ON `api_keys` (`user_id`);
