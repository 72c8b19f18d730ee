-- reverse: create index "payment_reversal_due" to table: "payments"
DROP INDEX `payment_reversal_due`;
-- reverse: create index "payment_status_capture_before" to table: "payments"
DROP INDEX `payment_status_capture_before`;
-- reverse: create index "payment_provider_provider_payment_id" to table: "payments"
DROP INDEX `payment_provider_provider_payment_id`;
-- reverse: create index "payment_customer_email_created_at" to table: "payments"
DROP INDEX `payment_customer_email_created_at`;
-- reverse: create index "payment_status_created_at" to table: "payments"
DROP INDEX `payment_status_created_at`;
-- reverse: create index "payment_merchant_id_created_at_id" to table: "payments"
DROP INDEX `payment_merchant_id_created_at_id`;
-- reverse: create index "payment_created_at_id" to table: "payments"
DROP INDEX `payment_created_at_id`;
-- reverse: create "new_payments" table
DROP TABLE `new_payments`;
