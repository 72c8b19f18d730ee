-- reverse: create index "payment_merchant_id_card_last4_created_at" to table: "payments"
DROP INDEX `payment_merchant_id_card_last4_created_at`;
