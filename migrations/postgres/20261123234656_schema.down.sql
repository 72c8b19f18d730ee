-- reverse: create index "revocation_until" to table: "revocations"
DROP INDEX "revocation_until";
-- reverse: create index "revocation_created_at" to table: "revocations"
DROP INDEX "revocation_created_at";
-- reverse: create "revocations" table
DROP TABLE "revocations";
-- reverse: modify "users" table
ALTER TABLE "users" DROP COLUMN "disabled";
