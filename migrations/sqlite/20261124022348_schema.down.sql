-- reverse: create index "apikey_user_id" to table: "api_keys"
DROP INDEX `apikey_user_id`;
-- reverse: create index "api_keys_key_hash_key" to table: "api_keys"
DROP INDEX `api_keys_key_hash_key`;
-- reverse: create "api_keys" table
DROP TABLE `api_keys`;
