-- reverse: create index "sandboxobject_kind_status_created_at" to table: "sandbox_objects"
DROP INDEX `sandboxobject_kind_status_created_at`;
-- reverse: create index "sandboxobject_provider_reference" to table: "sandbox_objects"
DROP INDEX `sandboxobject_provider_reference`;
-- reverse: create "sandbox_objects" table
DROP TABLE `sandbox_objects`;
-- reverse: create index "sandboxanswer_created_at" to table: "sandbox_answers"
DROP INDEX `sandboxanswer_created_at`;
-- reverse: create index "sandboxanswer_provider_key" to table: "sandbox_answers"
DROP INDEX `sandboxanswer_provider_key`;
-- reverse: create "sandbox_answers" table
DROP TABLE `sandbox_answers`;
-- reverse: create "config_versions" table
DROP TABLE `config_versions`;
-- reverse: create index "refund_status_created_at" to table: "refunds"
DROP INDEX `refund_status_created_at`;
-- reverse: add column "routing" to table: "payments"
ALTER TABLE `payments` DROP COLUMN `routing`;
-- reverse: add column "provider_decline_code" to table: "payments"
ALTER TABLE `payments` DROP COLUMN `provider_decline_code`;
