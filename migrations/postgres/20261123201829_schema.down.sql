-- reverse: create index "idempotencykey_resource_id" to table: "idempotency_keys"
DROP INDEX "idempotencykey_resource_id";
