-- modify "payments" table
ALTER TABLE "payments" ADD COLUMN "return_url" character varying NULL, ADD COLUMN "next_action_url" character varying NULL, ADD COLUMN "authenticate_before" timestamptz NULL;
