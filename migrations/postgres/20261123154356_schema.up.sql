-- modify "idempotency_keys" table
ALTER TABLE "idempotency_keys" DROP COLUMN "locked_at", DROP COLUMN "response_status", DROP COLUMN "response_body", ADD COLUMN "resource_id" character varying NULL, ADD COLUMN "settled_at" timestamptz NULL, ADD COLUMN "error_code" character varying NULL, ADD COLUMN "error_message" character varying NULL, ADD COLUMN "error_param" character varying NULL;
