-- modify "api_keys" table
ALTER TABLE "api_keys" ADD COLUMN "parent_id" character varying NULL;
-- create index "apikey_parent_id" to table: "api_keys"
CREATE INDEX "apikey_parent_id" ON "api_keys" ("parent_id");
