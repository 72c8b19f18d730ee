-- create "alerts" table
CREATE TABLE `alerts` (`id` text NOT NULL, `rule` text NOT NULL, `subject` text NOT NULL, `severity` text NOT NULL, `status` text NOT NULL DEFAULT ('open'), `message` text NOT NULL, `opened_at` datetime NOT NULL, `acknowledged_by` text NULL, `acknowledged_at` datetime NULL, `resolved_by` text NULL, `resolved_at` datetime NULL, `unresolved` text NULL, PRIMARY KEY (`id`));
-- create index "alerts_unresolved_key" to table: "alerts"
CREATE UNIQUE INDEX `alerts_unresolved_key` ON `alerts` (`unresolved`);
-- create index "alert_opened_at_id" to table: "alerts"
CREATE INDEX `alert_opened_at_id` ON `alerts` (`opened_at`, `id`);
-- create index "alert_status_opened_at" to table: "alerts"
CREATE INDEX `alert_status_opened_at` ON `alerts` (`status`, `opened_at`);
-- create "alert_changes" table
CREATE TABLE `alert_changes` (`id` text NOT NULL, `action` text NOT NULL, `by` text NOT NULL, `at` datetime NOT NULL, `alert_id` text NOT NULL, PRIMARY KEY (`id`), CONSTRAINT `alert_changes_alerts_history` FOREIGN KEY (`alert_id`) REFERENCES `alerts` (`id`) ON DELETE CASCADE);
-- create index "alertchange_alert_id_at" to table: "alert_changes"
CREATE INDEX `alertchange_alert_id_at` ON `alert_changes` (`alert_id`, `at`);
