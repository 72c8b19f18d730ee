-- reverse: create index "webhookdeliveryattempt_delivery_id_at" to table: "webhook_delivery_attempts"
DROP INDEX "webhookdeliveryattempt_delivery_id_at";
-- reverse: create "webhook_delivery_attempts" table
DROP TABLE "webhook_delivery_attempts";
-- reverse: create index "webhookdelivery_status_next_attempt_at" to table: "webhook_deliveries"
DROP INDEX "webhookdelivery_status_next_attempt_at";
-- reverse: create index "webhookdelivery_endpoint_id_event_id" to table: "webhook_deliveries"
DROP INDEX "webhookdelivery_endpoint_id_event_id";
-- reverse: create index "webhookdelivery_endpoint_id_created_at_id" to table: "webhook_deliveries"
DROP INDEX "webhookdelivery_endpoint_id_created_at_id";
-- reverse: create index "webhookdelivery_created_at" to table: "webhook_deliveries"
DROP INDEX "webhookdelivery_created_at";
-- reverse: create "webhook_deliveries" table
DROP TABLE "webhook_deliveries";
-- reverse: create index "webhookendpoint_created_at_id" to table: "webhook_endpoints"
DROP INDEX "webhookendpoint_created_at_id";
-- reverse: create "webhook_endpoints" table
DROP TABLE "webhook_endpoints";
-- reverse: create index "event_type_created_at" to table: "events"
DROP INDEX "event_type_created_at";
-- reverse: create index "event_object_id" to table: "events"
DROP INDEX "event_object_id";
-- reverse: create index "event_fanned_out_created_at" to table: "events"
DROP INDEX "event_fanned_out_created_at";
-- reverse: create index "event_created_at_id" to table: "events"
DROP INDEX "event_created_at_id";
-- reverse: create "events" table
DROP TABLE "events";
