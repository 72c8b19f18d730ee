-- create "payments" table
CREATE TABLE "payments" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "amount" bigint NOT NULL, "currency" character varying NOT NULL, "status" character varying NOT NULL, "payment_method" character varying NOT NULL, "customer_email" character varying NOT NULL, "customer_name" character varying NOT NULL DEFAULT '', "card_brand" character varying NOT NULL, "card_last4" character varying NOT NULL, "card_exp_month" bigint NOT NULL, "card_exp_year" bigint NOT NULL, "card_fingerprint" character varying NOT NULL, "provider" character varying NOT NULL, "provider_payment_id" character varying NULL, "amount_refunded" bigint NOT NULL DEFAULT 0, "failure_code" character varying NULL, "failure_message" character varying NULL, "description" character varying NULL, "metadata" jsonb NULL, PRIMARY KEY ("id"), CONSTRAINT "payment_amount_positive" CHECK (amount > 0), CONSTRAINT "payment_refund_within_amount" CHECK ((amount_refunded >= 0) AND (amount_refunded <= amount)), CONSTRAINT "payment_status_known" CHECK ((status)::text = ANY ((ARRAY['pending'::character varying, 'processing'::character varying, 'succeeded'::character varying, 'failed'::character varying, 'partially_refunded'::character varying, 'refunded'::character varying])::text[])));
-- create index "payment_created_at_id" to table: "payments"
CREATE INDEX "payment_created_at_id" ON "payments" ("created_at", "id");
-- create index "payment_customer_email_created_at" to table: "payments"
CREATE INDEX "payment_customer_email_created_at" ON "payments" ("customer_email", "created_at");
-- create index "payment_status_created_at" to table: "payments"
CREATE INDEX "payment_status_created_at" ON "payments" ("status", "created_at");
-- create "users" table
CREATE TABLE "users" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "email" character varying NOT NULL, "password_hash" character varying NOT NULL, "role" character varying NOT NULL, PRIMARY KEY ("id"));
-- create index "users_email_key" to table: "users"
CREATE UNIQUE INDEX "users_email_key" ON "users" ("email");
-- create "refresh_tokens" table
CREATE TABLE "refresh_tokens" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "token_hash" character varying NOT NULL, "family" character varying NOT NULL, "expires_at" timestamptz NOT NULL, "used_at" timestamptz NULL, "revoked_at" timestamptz NULL, "user_id" character varying NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "refresh_tokens_users_refresh_tokens" FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "refresh_tokens_token_hash_key" to table: "refresh_tokens"
CREATE UNIQUE INDEX "refresh_tokens_token_hash_key" ON "refresh_tokens" ("token_hash");
-- create index "refreshtoken_family" to table: "refresh_tokens"
CREATE INDEX "refreshtoken_family" ON "refresh_tokens" ("family");
