-- create "signing_keys" table
CREATE TABLE `signing_keys` (`id` text NOT NULL, `algorithm` text NOT NULL, `public_key` text NOT NULL, `created_at` datetime NOT NULL, `announced_at` datetime NOT NULL, PRIMARY KEY (`id`));
-- create index "signingkey_announced_at" to table: "signing_keys"
CREATE INDEX `signingkey_announced_at` ON `signing_keys` (`announced_at`);
