-- reverse: modify "idempotency_keys" table
ALTER TABLE "idempotency_keys" DROP COLUMN "error_param", DROP COLUMN "error_message", DROP COLUMN "error_code", DROP COLUMN "settled_at", DROP COLUMN "resource_id", ADD COLUMN "response_body" bytea NULL, ADD COLUMN "response_status" bigint NULL, ADD COLUMN "locked_at" timestamptz NULL;
