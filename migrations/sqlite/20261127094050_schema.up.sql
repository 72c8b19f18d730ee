-- drop index "idempotencykey_resource_id" from table: "idempotency_keys"
DROP INDEX `idempotencykey_resource_id`;
-- create index "idempotencykey_resource_id_merchant_id" to table: "idempotency_keys"
CREATE INDEX `idempotencykey_resource_id_merchant_id` ON `idempotency_keys` (`resource_id`, `merchant_id`);
-- drop index "event_fanned_out_created_at" from table: "events"
DROP INDEX `event_fanned_out_created_at`;
-- create index "event_waiting_created_at_id" to table: "events"
CREATE INDEX `event_waiting_created_at_id` ON `events` (`created_at`, `id`) WHERE NOT fanned_out;
