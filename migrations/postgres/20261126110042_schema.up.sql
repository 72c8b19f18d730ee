-- create "events" table
CREATE TABLE "events" ("id" character varying NOT NULL, "type" character varying NOT NULL, "object_id" character varying NOT NULL, "body" bytea NOT NULL, "fanned_out" boolean NOT NULL DEFAULT false, "created_at" timestamptz NOT NULL, PRIMARY KEY ("id"));
-- create index "event_created_at_id" to table: "events"
CREATE INDEX "event_created_at_id" ON "events" ("created_at", "id");
-- create index "event_fanned_out_created_at" to table: "events"
CREATE INDEX "event_fanned_out_created_at" ON "events" ("fanned_out", "created_at");
-- create index "event_object_id" to table: "events"
CREATE INDEX "event_object_id" ON "events" ("object_id");
-- create index "event_type_created_at" to table: "events"
CREATE INDEX "event_type_created_at" ON "events" ("type", "created_at");
-- create "webhook_endpoints" table
CREATE TABLE "webhook_endpoints" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "url" character varying NOT NULL, "events" jsonb NOT NULL, "description" character varying NULL, "status" character varying NOT NULL DEFAULT 'enabled', "disabled_reason" character varying NULL, "secret" character varying NOT NULL, "previous_secret" character varying NULL, "previous_secret_expires_at" timestamptz NULL, "failing_since" timestamptz NULL, "created_by" character varying NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "webhook_endpoint_status_known" CHECK ((status)::text = ANY ((ARRAY['enabled'::character varying, 'disabled'::character varying])::text[])));
-- create index "webhookendpoint_created_at_id" to table: "webhook_endpoints"
CREATE INDEX "webhookendpoint_created_at_id" ON "webhook_endpoints" ("created_at", "id");
-- create "webhook_deliveries" table
CREATE TABLE "webhook_deliveries" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "event_id" character varying NOT NULL, "type" character varying NOT NULL, "test_body" bytea NULL, "status" character varying NOT NULL DEFAULT 'pending', "attempts" bigint NOT NULL DEFAULT 0, "next_attempt_at" timestamptz NULL, "last_status_code" bigint NULL, "last_error" character varying NULL, "latency_ms" bigint NULL, "delivered_at" timestamptz NULL, "endpoint_id" character varying NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "webhook_deliveries_webhook_endpoints_deliveries" FOREIGN KEY ("endpoint_id") REFERENCES "webhook_endpoints" ("id") ON UPDATE NO ACTION ON DELETE CASCADE, CONSTRAINT "webhook_delivery_status_known" CHECK ((status)::text = ANY ((ARRAY['pending'::character varying, 'delivered'::character varying, 'failed'::character varying])::text[])));
-- create index "webhookdelivery_created_at" to table: "webhook_deliveries"
CREATE INDEX "webhookdelivery_created_at" ON "webhook_deliveries" ("created_at");
-- create index "webhookdelivery_endpoint_id_created_at_id" to table: "webhook_deliveries"
CREATE INDEX "webhookdelivery_endpoint_id_created_at_id" ON "webhook_deliveries" ("endpoint_id", "created_at", "id");
-- create index "webhookdelivery_endpoint_id_event_id" to table: "webhook_deliveries"
CREATE UNIQUE INDEX "webhookdelivery_endpoint_id_event_id" ON "webhook_deliveries" ("endpoint_id", "event_id");
-- create index "webhookdelivery_status_next_attempt_at" to table: "webhook_deliveries"
CREATE INDEX "webhookdelivery_status_next_attempt_at" ON "webhook_deliveries" ("status", "next_attempt_at");
-- create "webhook_delivery_attempts" table
CREATE TABLE "webhook_delivery_attempts" ("id" character varying NOT NULL, "at" timestamptz NOT NULL, "status_code" bigint NULL, "latency_ms" bigint NOT NULL, "error" character varying NULL, "delivery_id" character varying NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "webhook_delivery_attempts_webhook_deliveries_attempt_log" FOREIGN KEY ("delivery_id") REFERENCES "webhook_deliveries" ("id") ON UPDATE NO ACTION ON DELETE CASCADE);
-- create index "webhookdeliveryattempt_delivery_id_at" to table: "webhook_delivery_attempts"
CREATE INDEX "webhookdeliveryattempt_delivery_id_at" ON "webhook_delivery_attempts" ("delivery_id", "at");
