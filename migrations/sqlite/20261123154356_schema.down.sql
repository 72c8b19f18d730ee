-- reverse: create index "idempotencykey_expires_at" to table: "idempotency_keys"
DROP INDEX `idempotencykey_expires_at`;
-- reverse: create index "idempotencykey_principal_key" to table: "idempotency_keys"
DROP INDEX `idempotencykey_principal_key`;
-- reverse: create "new_idempotency_keys" table
DROP TABLE `new_idempotency_keys`;
