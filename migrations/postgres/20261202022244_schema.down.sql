-- reverse: create index "payment_reversal_due" to table: "payments"
DROP INDEX "payment_reversal_due";
-- reverse: modify "payments" table; the check goes first, as dropping the columns it reads drops it too
ALTER TABLE "payments" DROP CONSTRAINT "payment_reversal_known", DROP COLUMN "reversal_attempts", DROP COLUMN "reversal_due", DROP COLUMN "reversal_refund", DROP COLUMN "reversal_failure_message", DROP COLUMN "reversal_status", DROP COLUMN "return_secret_hash";
