-- create "alerts" table
CREATE TABLE "alerts" ("id" character varying NOT NULL, "rule" character varying NOT NULL, "subject" character varying NOT NULL, "severity" character varying NOT NULL, "status" character varying NOT NULL DEFAULT 'open', "message" character varying NOT NULL, "opened_at" timestamptz NOT NULL, "acknowledged_by" character varying NULL, "acknowledged_at" timestamptz NULL, "resolved_by" character varying NULL, "resolved_at" timestamptz NULL, "unresolved" character varying NULL, PRIMARY KEY ("id"));
-- create index "alert_opened_at_id" to table: "alerts"
CREATE INDEX "alert_opened_at_id" ON "alerts" ("opened_at", "id");
-- create index "alert_status_opened_at" to table: "alerts"
CREATE INDEX "alert_status_opened_at" ON "alerts" ("status", "opened_at");
-- create index "alerts_unresolved_key" to table: "alerts"
CREATE UNIQUE INDEX "alerts_unresolved_key" ON "alerts" ("unresolved");
-- create "alert_changes" table
CREATE TABLE "alert_changes" ("id" character varying NOT NULL, "action" character varying NOT NULL, "by" character varying NOT NULL, "at" timestamptz NOT NULL, "alert_id" character varying NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "alert_changes_alerts_history" FOREIGN KEY ("alert_id") REFERENCES "alerts" ("id") ON UPDATE NO ACTION ON DELETE CASCADE);
-- create index "alertchange_alert_id_at" to table: "alert_changes"
CREATE INDEX "alertchange_alert_id_at" ON "alert_changes" ("alert_id", "at");
