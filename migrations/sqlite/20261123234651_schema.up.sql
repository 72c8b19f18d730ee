-- disable the enforcement of foreign-keys constraints
PRAGMA foreign_keys = off;
-- create "new_users" table
CREATE TABLE `new_users` (`id` text NOT NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `email` text NOT NULL, `password_hash` text NOT NULL, `role` text NOT NULL, `disabled` bool NOT NULL DEFAULT (false), PRIMARY KEY (`id`));
-- copy rows from old table "users" to new temporary table "new_users"
INSERT INTO `new_users` (`id`, `created_at`, `updated_at`, `email`, `password_hash`, `role`) SELECT `id`, `created_at`, `updated_at`, `email`, `password_hash`, `role` FROM `users`;
-- drop "users" table after copying rows
DROP TABLE `users`;
-- rename temporary table "new_users" to "users"
ALTER TABLE `new_users` RENAME TO `users`;
-- create index "users_email_key" to table: "users"
CREATE UNIQUE INDEX `users_email_key` ON `users` (`email`);
-- create "revocations" table
CREATE TABLE `revocations` (`id` text NOT NULL, `subject` text NOT NULL, `until` datetime NOT NULL, `created_at` datetime NOT NULL, PRIMARY KEY (`id`));
-- create index "revocation_created_at" to table: "revocations"
CREATE INDEX `revocation_created_at` ON `revocations` (`created_at`);
-- create index "revocation_until" to table: "revocations"
CREATE INDEX `revocation_until` ON `revocations` (`until`);
-- enable back the enforcement of foreign-keys constraints
PRAGMA foreign_keys = on;
