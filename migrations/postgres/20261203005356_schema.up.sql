-- modify "events" table
ALTER TABLE "events" ADD COLUMN "trace_parent" character varying NULL;
-- modify "payments" table
ALTER TABLE "payments" ADD COLUMN "trace_parent" character varying NULL;
-- modify "refunds" table
ALTER TABLE "refunds" ADD COLUMN "trace_parent" character varying NULL;
-- modify "webhook_deliveries" table
ALTER TABLE "webhook_deliveries" ADD COLUMN "trace_parent" character varying NULL;
-- modify "webhook_events" table
ALTER TABLE "webhook_events" ADD COLUMN "trace_parent" character varying NULL;
