-- reverse: create index "alertchange_alert_id_at" to table: "alert_changes"
DROP INDEX `alertchange_alert_id_at`;
-- reverse: create "alert_changes" table
DROP TABLE `alert_changes`;
-- reverse: create index "alert_status_opened_at" to table: "alerts"
DROP INDEX `alert_status_opened_at`;
-- reverse: create index "alert_opened_at_id" to table: "alerts"
DROP INDEX `alert_opened_at_id`;
-- reverse: create index "alerts_unresolved_key" to table: "alerts"
DROP INDEX `alerts_unresolved_key`;
-- reverse: create "alerts" table
DROP TABLE `alerts`;
