-- add column "return_url" to table: "payments"
ALTER TABLE `payments` ADD COLUMN `return_url` text NULL;
-- add column "next_action_url" to table: "payments"
ALTER TABLE `payments` ADD COLUMN `next_action_url` text NULL;
-- add column "authenticate_before" to table: "payments"
ALTER TABLE `payments` ADD COLUMN `authenticate_before` datetime NULL;
