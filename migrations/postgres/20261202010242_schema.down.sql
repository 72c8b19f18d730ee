-- reverse: modify "payments" table
ALTER TABLE "payments" DROP COLUMN "return_secret_hash";
