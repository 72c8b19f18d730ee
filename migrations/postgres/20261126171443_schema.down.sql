-- reverse: create index "apikey_parent_id" to table: "api_keys"
DROP INDEX "apikey_parent_id";
-- reverse: modify "api_keys" table
ALTER TABLE "api_keys" DROP COLUMN "parent_id";
