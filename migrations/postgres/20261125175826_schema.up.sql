-- modify "payments" table
ALTER TABLE "payments" ADD CONSTRAINT "payment_capture_within_amount" CHECK ((amount_captured >= 0) AND (amount_captured <= amount) AND (amount_capturable >= 0) AND (amount_capturable <= amount)), ADD COLUMN "capture_method" character varying NOT NULL DEFAULT 'automatic', ADD COLUMN "amount_capturable" bigint NOT NULL DEFAULT 0, ADD COLUMN "amount_captured" bigint NOT NULL DEFAULT 0, ADD COLUMN "capture_before" timestamptz NULL, ADD COLUMN "canceled_at" timestamptz NULL, ADD COLUMN "cancellation_reason" character varying NULL, ADD COLUMN "pending_action" character varying NULL, ADD COLUMN "capture_requested" bigint NULL;
-- create index "payment_status_capture_before" to table: "payments"
CREATE INDEX "payment_status_capture_before" ON "payments" ("status", "capture_before");
-- modify "sandbox_objects" table
ALTER TABLE "sandbox_objects" ADD COLUMN "captured" bigint NULL;
-- Atlas does not compare CHECK expressions: the status checks are rewritten by hand for the new
-- payment statuses, and the payments already paid are marked captured in full.
ALTER TABLE "payments" DROP CONSTRAINT "payment_status_known", ADD CONSTRAINT "payment_status_known" CHECK (status IN ('pending', 'processing', 'requires_action', 'requires_capture', 'succeeded', 'failed', 'canceled', 'partially_refunded', 'refunded'));
ALTER TABLE "payment_status_changes" DROP CONSTRAINT "status_change_statuses_known", ADD CONSTRAINT "status_change_statuses_known" CHECK ("to" IN ('pending', 'processing', 'requires_action', 'requires_capture', 'succeeded', 'failed', 'canceled', 'partially_refunded', 'refunded') AND ("from" IS NULL OR "from" IN ('pending', 'processing', 'requires_action', 'requires_capture', 'succeeded', 'failed', 'canceled', 'partially_refunded', 'refunded')));
UPDATE "payments" SET "amount_captured" = "amount" WHERE "status" IN ('succeeded', 'partially_refunded', 'refunded');
