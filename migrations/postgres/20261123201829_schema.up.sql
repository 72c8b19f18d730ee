-- create index "idempotencykey_resource_id" to table: "idempotency_keys"
CREATE INDEX "idempotencykey_resource_id" ON "idempotency_keys" ("resource_id");
