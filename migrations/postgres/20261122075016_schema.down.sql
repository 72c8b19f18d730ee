-- reverse: create index "refreshtoken_family" to table: "refresh_tokens"
DROP INDEX "refreshtoken_family";
-- reverse: create index "refresh_tokens_token_hash_key" to table: "refresh_tokens"
DROP INDEX "refresh_tokens_token_hash_key";
-- reverse: create "refresh_tokens" table
DROP TABLE "refresh_tokens";
-- reverse: create index "users_email_key" to table: "users"
DROP INDEX "users_email_key";
-- reverse: create "users" table
DROP TABLE "users";
-- reverse: create index "payment_status_created_at" to table: "payments"
DROP INDEX "payment_status_created_at";
-- reverse: create index "payment_customer_email_created_at" to table: "payments"
DROP INDEX "payment_customer_email_created_at";
-- reverse: create index "payment_created_at_id" to table: "payments"
DROP INDEX "payment_created_at_id";
-- reverse: create "payments" table
DROP TABLE "payments";
