-- reverse: add column "return_secret_hash" to table: "payments"
ALTER TABLE `payments` DROP COLUMN `return_secret_hash`;
