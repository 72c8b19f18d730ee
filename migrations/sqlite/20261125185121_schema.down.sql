-- reverse: add column "authenticate_before" to table: "payments"
ALTER TABLE `payments` DROP COLUMN `authenticate_before`;
-- reverse: add column "next_action_url" to table: "payments"
ALTER TABLE `payments` DROP COLUMN `next_action_url`;
-- reverse: add column "return_url" to table: "payments"
ALTER TABLE `payments` DROP COLUMN `return_url`;
