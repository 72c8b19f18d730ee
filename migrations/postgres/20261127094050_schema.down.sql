-- reverse: create index "idempotencykey_resource_id_merchant_id" to table: "idempotency_keys"
DROP INDEX "idempotencykey_resource_id_merchant_id";
-- reverse: drop index "idempotencykey_resource_id" from table: "idempotency_keys"
CREATE INDEX "idempotencykey_resource_id" ON "idempotency_keys" ("resource_id");
-- reverse: create index "event_waiting_created_at_id" to table: "events"
DROP INDEX "event_waiting_created_at_id";
-- reverse: drop index "event_fanned_out_created_at" from table: "events"
CREATE INDEX "event_fanned_out_created_at" ON "events" ("fanned_out", "created_at");
