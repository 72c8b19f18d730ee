-- modify "users" table
ALTER TABLE "users" ADD COLUMN "disabled" boolean NOT NULL DEFAULT false;
-- create "revocations" table
CREATE TABLE "revocations" ("id" character varying NOT NULL, "subject" character varying NOT NULL, "until" timestamptz NOT NULL, "created_at" timestamptz NOT NULL, PRIMARY KEY ("id"));
-- create index "revocation_created_at" to table: "revocations"
CREATE INDEX "revocation_created_at" ON "revocations" ("created_at");
-- create index "revocation_until" to table: "revocations"
CREATE INDEX "revocation_until" ON "revocations" ("until");
