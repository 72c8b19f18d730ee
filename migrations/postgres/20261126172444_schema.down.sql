-- reverse: create index "signingkey_announced_at" to table: "signing_keys"
DROP INDEX "signingkey_announced_at";
-- reverse: create "signing_keys" table
DROP TABLE "signing_keys";
