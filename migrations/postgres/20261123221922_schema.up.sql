-- modify "payments" table
ALTER TABLE "payments" ADD COLUMN "disputed_at" timestamptz NULL, ADD COLUMN "dispute_reason" character varying NULL;
-- create index "payment_provider_provider_payment_id" to table: "payments"
CREATE INDEX "payment_provider_provider_payment_id" ON "payments" ("provider", "provider_payment_id");
-- create index "refund_payment_id_provider_refund_id" to table: "refunds"
CREATE UNIQUE INDEX "refund_payment_id_provider_refund_id" ON "refunds" ("payment_id", "provider_refund_id");
-- create "webhook_events" table
CREATE TABLE "webhook_events" ("id" character varying NOT NULL, "provider" character varying NOT NULL, "event_id" character varying NOT NULL, "type" character varying NOT NULL, "status" character varying NOT NULL, "payload" bytea NOT NULL, "attempts" bigint NOT NULL DEFAULT 0, "next_attempt_at" timestamptz NULL, "last_error" character varying NULL, "ignored_reason" character varying NULL, "payment_id" character varying NULL, "received_at" timestamptz NOT NULL, "processed_at" timestamptz NULL, PRIMARY KEY ("id"), CONSTRAINT "webhook_event_status_known" CHECK ((status)::text = ANY ((ARRAY['received'::character varying, 'processed'::character varying, 'ignored'::character varying, 'failed'::character varying, 'dead'::character varying])::text[])));
-- create index "webhookevent_provider_event_id" to table: "webhook_events"
CREATE UNIQUE INDEX "webhookevent_provider_event_id" ON "webhook_events" ("provider", "event_id");
-- create index "webhookevent_provider_received_at" to table: "webhook_events"
CREATE INDEX "webhookevent_provider_received_at" ON "webhook_events" ("provider", "received_at");
-- create index "webhookevent_received_at_id" to table: "webhook_events"
CREATE INDEX "webhookevent_received_at_id" ON "webhook_events" ("received_at", "id");
-- create index "webhookevent_status_next_attempt_at" to table: "webhook_events"
CREATE INDEX "webhookevent_status_next_attempt_at" ON "webhook_events" ("status", "next_attempt_at");
-- create "webhook_attempts" table
CREATE TABLE "webhook_attempts" ("id" character varying NOT NULL, "at" timestamptz NOT NULL, "status" character varying NOT NULL, "error" character varying NULL, "duration_ms" bigint NOT NULL, "event_id" character varying NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "webhook_attempts_webhook_events_attempt_log" FOREIGN KEY ("event_id") REFERENCES "webhook_events" ("id") ON UPDATE NO ACTION ON DELETE CASCADE, CONSTRAINT "webhook_attempt_status_known" CHECK ((status)::text = ANY ((ARRAY['received'::character varying, 'processed'::character varying, 'ignored'::character varying, 'failed'::character varying, 'dead'::character varying])::text[])));
-- create index "webhookattempt_event_id_at" to table: "webhook_attempts"
CREATE INDEX "webhookattempt_event_id_at" ON "webhook_attempts" ("event_id", "at");
