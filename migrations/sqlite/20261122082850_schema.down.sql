-- reverse: create index "refund_payment_id_status" to table: "refunds"
DROP INDEX `refund_payment_id_status`;
-- reverse: create "refunds" table
DROP TABLE `refunds`;
-- reverse: create index "paymentstatuschange_payment_id_at" to table: "payment_status_changes"
DROP INDEX `paymentstatuschange_payment_id_at`;
-- reverse: create "payment_status_changes" table
DROP TABLE `payment_status_changes`;
-- reverse: create index "idempotencykey_expires_at" to table: "idempotency_keys"
DROP INDEX `idempotencykey_expires_at`;
-- reverse: create index "idempotencykey_principal_key" to table: "idempotency_keys"
DROP INDEX `idempotencykey_principal_key`;
-- reverse: create "idempotency_keys" table
DROP TABLE `idempotency_keys`;
