-- reverse: modify "payments" table
ALTER TABLE "payments" DROP COLUMN "authenticate_before", DROP COLUMN "next_action_url", DROP COLUMN "return_url";
