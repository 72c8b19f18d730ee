-- reverse: create index "merchant_updated_at" to table: "merchants"
DROP INDEX "merchant_updated_at";
-- reverse: create index "merchant_created_at_id" to table: "merchants"
DROP INDEX "merchant_created_at_id";
-- reverse: create "merchants" table
DROP TABLE "merchants";
-- reverse: create index "webhookendpoint_merchant_id_created_at_id" to table: "webhook_endpoints"
DROP INDEX "webhookendpoint_merchant_id_created_at_id";
-- reverse: modify "webhook_endpoints" table
ALTER TABLE "webhook_endpoints" DROP COLUMN "merchant_id";
-- reverse: drop index "webhookendpoint_created_at_id" from table: "webhook_endpoints"
CREATE INDEX "webhookendpoint_created_at_id" ON "webhook_endpoints" ("created_at", "id");
-- reverse: modify "webhook_delivery_attempts" table
ALTER TABLE "webhook_delivery_attempts" DROP COLUMN "merchant_id";
-- reverse: modify "webhook_deliveries" table
ALTER TABLE "webhook_deliveries" DROP COLUMN "merchant_id";
-- reverse: modify "users" table
ALTER TABLE "users" DROP COLUMN "platform", DROP COLUMN "merchant_id";
-- reverse: modify "refunds" table
ALTER TABLE "refunds" DROP COLUMN "merchant_id";
-- reverse: create index "payment_merchant_id_created_at_id" to table: "payments"
DROP INDEX "payment_merchant_id_created_at_id";
-- reverse: modify "payments" table
ALTER TABLE "payments" DROP COLUMN "merchant_id";
-- reverse: modify "payment_status_changes" table
ALTER TABLE "payment_status_changes" DROP COLUMN "merchant_id";
-- reverse: create index "idempotencykey_merchant_id_principal_key" to table: "idempotency_keys"
DROP INDEX "idempotencykey_merchant_id_principal_key";
-- reverse: modify "idempotency_keys" table
ALTER TABLE "idempotency_keys" DROP COLUMN "merchant_id";
-- reverse: drop index "idempotencykey_principal_key" from table: "idempotency_keys"
CREATE UNIQUE INDEX "idempotencykey_principal_key" ON "idempotency_keys" ("principal", "key");
-- reverse: create index "event_merchant_id_created_at_id" to table: "events"
DROP INDEX "event_merchant_id_created_at_id";
-- reverse: modify "events" table
ALTER TABLE "events" DROP COLUMN "merchant_id";
-- reverse: modify "api_keys" table
ALTER TABLE "api_keys" DROP COLUMN "merchant_id";
