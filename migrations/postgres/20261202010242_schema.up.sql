-- modify "payments" table
ALTER TABLE "payments" ADD COLUMN "return_secret_hash" character varying NULL;
