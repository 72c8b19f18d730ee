-- create "idempotency_keys" table
CREATE TABLE "idempotency_keys" ("id" character varying NOT NULL, "principal" character varying NOT NULL, "key" character varying NOT NULL, "request_hash" character varying NOT NULL, "locked_at" timestamptz NULL, "response_status" bigint NULL, "response_body" bytea NULL, "expires_at" timestamptz NOT NULL, "created_at" timestamptz NOT NULL, PRIMARY KEY ("id"));
-- create index "idempotencykey_expires_at" to table: "idempotency_keys"
CREATE INDEX "idempotencykey_expires_at" ON "idempotency_keys" ("expires_at");
-- create index "idempotencykey_principal_key" to table: "idempotency_keys"
CREATE UNIQUE INDEX "idempotencykey_principal_key" ON "idempotency_keys" ("principal", "key");
-- create "payment_status_changes" table
CREATE TABLE "payment_status_changes" ("id" character varying NOT NULL, "from" character varying NULL, "to" character varying NOT NULL, "reason" character varying NOT NULL DEFAULT '', "actor" character varying NOT NULL DEFAULT 'system', "at" timestamptz NOT NULL, "payment_id" character varying NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "payment_status_changes_payments_status_history" FOREIGN KEY ("payment_id") REFERENCES "payments" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "paymentstatuschange_payment_id_at" to table: "payment_status_changes"
CREATE INDEX "paymentstatuschange_payment_id_at" ON "payment_status_changes" ("payment_id", "at");
-- create "refunds" table
CREATE TABLE "refunds" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "amount" bigint NOT NULL, "currency" character varying NOT NULL, "status" character varying NOT NULL, "reason" character varying NULL, "provider_refund_id" character varying NULL, "failure_code" character varying NULL, "payment_id" character varying NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "refunds_payments_refunds" FOREIGN KEY ("payment_id") REFERENCES "payments" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION, CONSTRAINT "refund_amount_positive" CHECK (amount > 0), CONSTRAINT "refund_status_known" CHECK ((status)::text = ANY ((ARRAY['pending'::character varying, 'succeeded'::character varying, 'failed'::character varying])::text[])));
-- create index "refund_payment_id_status" to table: "refunds"
CREATE INDEX "refund_payment_id_status" ON "refunds" ("payment_id", "status");
