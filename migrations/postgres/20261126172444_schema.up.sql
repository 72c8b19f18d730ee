-- create "signing_keys" table
CREATE TABLE "signing_keys" ("id" character varying NOT NULL, "algorithm" character varying NOT NULL, "public_key" text NOT NULL, "created_at" timestamptz NOT NULL, "announced_at" timestamptz NOT NULL, PRIMARY KEY ("id"));
-- create index "signingkey_announced_at" to table: "signing_keys"
CREATE INDEX "signingkey_announced_at" ON "signing_keys" ("announced_at");
