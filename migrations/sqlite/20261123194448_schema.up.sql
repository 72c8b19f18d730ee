-- add column "provider_decline_code" to table: "payments"
ALTER TABLE `payments` ADD COLUMN `provider_decline_code` text NULL;
-- add column "routing" to table: "payments"
ALTER TABLE `payments` ADD COLUMN `routing` json NULL;
-- create index "refund_status_created_at" to table: "refunds"
CREATE INDEX `refund_status_created_at` ON `refunds` (`status`, `created_at`);
-- create "config_versions" table
CREATE TABLE `config_versions` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `document` json NOT NULL, `changed_by` text NOT NULL, `created_at` datetime NOT NULL);
-- create "sandbox_answers" table
CREATE TABLE `sandbox_answers` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `provider` text NOT NULL, `key` text NOT NULL, `request` text NOT NULL, `status` integer NOT NULL, `body` blob NOT NULL, `created_at` datetime NOT NULL);
-- create index "sandboxanswer_provider_key" to table: "sandbox_answers"
CREATE UNIQUE INDEX `sandboxanswer_provider_key` ON `sandbox_answers` (`provider`, `key`);
-- create index "sandboxanswer_created_at" to table: "sandbox_answers"
CREATE INDEX `sandboxanswer_created_at` ON `sandbox_answers` (`created_at`);
-- create "sandbox_objects" table
CREATE TABLE `sandbox_objects` (`id` text NOT NULL, `provider` text NOT NULL, `kind` text NOT NULL, `reference` text NOT NULL DEFAULT (''), `charge_id` text NULL, `amount` integer NOT NULL, `currency` text NOT NULL, `refunded` integer NOT NULL DEFAULT (0), `status` text NOT NULL, `body` blob NOT NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, PRIMARY KEY (`id`));
-- create index "sandboxobject_provider_reference" to table: "sandbox_objects"
CREATE INDEX `sandboxobject_provider_reference` ON `sandbox_objects` (`provider`, `reference`);
-- create index "sandboxobject_kind_status_created_at" to table: "sandbox_objects"
CREATE INDEX `sandboxobject_kind_status_created_at` ON `sandbox_objects` (`kind`, `status`, `created_at`);
