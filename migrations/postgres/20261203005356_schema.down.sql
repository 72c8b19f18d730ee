-- reverse: modify "webhook_events" table
ALTER TABLE "webhook_events" DROP COLUMN "trace_parent";
-- reverse: modify "webhook_deliveries" table
ALTER TABLE "webhook_deliveries" DROP COLUMN "trace_parent";
-- reverse: modify "refunds" table
ALTER TABLE "refunds" DROP COLUMN "trace_parent";
-- reverse: modify "payments" table
ALTER TABLE "payments" DROP COLUMN "trace_parent";
-- reverse: modify "events" table
ALTER TABLE "events" DROP COLUMN "trace_parent";
