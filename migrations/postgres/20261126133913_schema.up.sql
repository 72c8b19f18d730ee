-- modify "api_keys" table
ALTER TABLE "api_keys" ADD COLUMN "merchant_id" character varying NOT NULL DEFAULT 'mer_00000000000000000000000000';
-- modify "events" table
ALTER TABLE "events" ADD COLUMN "merchant_id" character varying NOT NULL DEFAULT 'mer_00000000000000000000000000';
-- create index "event_merchant_id_created_at_id" to table: "events"
CREATE INDEX "event_merchant_id_created_at_id" ON "events" ("merchant_id", "created_at", "id");
-- drop index "idempotencykey_principal_key" from table: "idempotency_keys"
DROP INDEX "idempotencykey_principal_key";
-- modify "idempotency_keys" table
ALTER TABLE "idempotency_keys" ADD COLUMN "merchant_id" character varying NOT NULL DEFAULT 'mer_00000000000000000000000000';
-- create index "idempotencykey_merchant_id_principal_key" to table: "idempotency_keys"
CREATE UNIQUE INDEX "idempotencykey_merchant_id_principal_key" ON "idempotency_keys" ("merchant_id", "principal", "key");
-- modify "payment_status_changes" table
ALTER TABLE "payment_status_changes" ADD COLUMN "merchant_id" character varying NOT NULL DEFAULT 'mer_00000000000000000000000000';
-- modify "payments" table
ALTER TABLE "payments" ADD COLUMN "merchant_id" character varying NOT NULL DEFAULT 'mer_00000000000000000000000000';
-- create index "payment_merchant_id_created_at_id" to table: "payments"
CREATE INDEX "payment_merchant_id_created_at_id" ON "payments" ("merchant_id", "created_at", "id");
-- modify "refunds" table
ALTER TABLE "refunds" ADD COLUMN "merchant_id" character varying NOT NULL DEFAULT 'mer_00000000000000000000000000';
-- modify "users" table
ALTER TABLE "users" ADD COLUMN "merchant_id" character varying NOT NULL DEFAULT 'mer_00000000000000000000000000', ADD COLUMN "platform" boolean NOT NULL DEFAULT false;
-- modify "webhook_deliveries" table
ALTER TABLE "webhook_deliveries" ADD COLUMN "merchant_id" character varying NOT NULL DEFAULT 'mer_00000000000000000000000000';
-- modify "webhook_delivery_attempts" table
ALTER TABLE "webhook_delivery_attempts" ADD COLUMN "merchant_id" character varying NOT NULL DEFAULT 'mer_00000000000000000000000000';
-- drop index "webhookendpoint_created_at_id" from table: "webhook_endpoints"
DROP INDEX "webhookendpoint_created_at_id";
-- modify "webhook_endpoints" table
ALTER TABLE "webhook_endpoints" ADD COLUMN "merchant_id" character varying NOT NULL DEFAULT 'mer_00000000000000000000000000';
-- create index "webhookendpoint_merchant_id_created_at_id" to table: "webhook_endpoints"
CREATE INDEX "webhookendpoint_merchant_id_created_at_id" ON "webhook_endpoints" ("merchant_id", "created_at", "id");
-- create "merchants" table
CREATE TABLE "merchants" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "name" character varying NOT NULL, "status" character varying NOT NULL DEFAULT 'active', PRIMARY KEY ("id"), CONSTRAINT "merchant_status_known" CHECK ((status)::text = ANY ((ARRAY['active'::character varying, 'disabled'::character varying])::text[])));
-- create index "merchant_created_at_id" to table: "merchants"
CREATE INDEX "merchant_created_at_id" ON "merchants" ("created_at", "id");
-- create index "merchant_updated_at" to table: "merchants"
CREATE INDEX "merchant_updated_at" ON "merchants" ("updated_at");
-- Everything from before merchants existed is the default merchant's (the columns' default), and
-- its admins become the platform's staff.
INSERT INTO "merchants" ("id", "created_at", "updated_at", "name", "status") VALUES ('mer_00000000000000000000000000', now(), now(), 'default', 'active');
UPDATE "users" SET "platform" = true WHERE "role" = 'admin';
