-- create index "payment_merchant_id_card_last4_created_at" to table: "payments"
CREATE INDEX "payment_merchant_id_card_last4_created_at" ON "payments" ("merchant_id", "card_last4", "created_at");
