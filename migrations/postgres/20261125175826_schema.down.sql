-- reverse: the status checks rewritten by hand
ALTER TABLE "payment_status_changes" DROP CONSTRAINT "status_change_statuses_known", ADD CONSTRAINT "status_change_statuses_known" CHECK ("to" IN ('pending', 'processing', 'succeeded', 'failed', 'partially_refunded', 'refunded') AND ("from" IS NULL OR "from" IN ('pending', 'processing', 'succeeded', 'failed', 'partially_refunded', 'refunded')));
ALTER TABLE "payments" DROP CONSTRAINT "payment_status_known", ADD CONSTRAINT "payment_status_known" CHECK (status IN ('pending', 'processing', 'succeeded', 'failed', 'partially_refunded', 'refunded'));
-- reverse: modify "sandbox_objects" table
ALTER TABLE "sandbox_objects" DROP COLUMN "captured";
-- reverse: create index "payment_status_capture_before" to table: "payments"
DROP INDEX "payment_status_capture_before";
-- reverse: modify "payments" table
ALTER TABLE "payments" DROP COLUMN "capture_requested", DROP COLUMN "pending_action", DROP COLUMN "cancellation_reason", DROP COLUMN "canceled_at", DROP COLUMN "capture_before", DROP COLUMN "amount_captured", DROP COLUMN "amount_capturable", DROP COLUMN "capture_method", DROP CONSTRAINT "payment_capture_within_amount";
