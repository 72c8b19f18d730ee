-- modify "payments" table
ALTER TABLE "payments" ADD CONSTRAINT "payment_reversal_known" CHECK (((reversal_status IS NULL) OR ((reversal_status)::text = ANY ((ARRAY['pending'::character varying, 'voided'::character varying, 'refunded'::character varying, 'failed'::character varying])::text[]))) AND (reversal_refund >= 0) AND (reversal_refund <= amount)), ADD COLUMN "reversal_status" character varying NULL, ADD COLUMN "reversal_failure_message" character varying NULL, ADD COLUMN "reversal_refund" bigint NOT NULL DEFAULT 0, ADD COLUMN "reversal_due" timestamptz NULL, ADD COLUMN "reversal_attempts" bigint NOT NULL DEFAULT 0;
-- create index "payment_reversal_due" to table: "payments"
CREATE INDEX "payment_reversal_due" ON "payments" ("reversal_due");
