-- add column "return_secret_hash" to table: "payments"
ALTER TABLE `payments` ADD COLUMN `return_secret_hash` text NULL;
