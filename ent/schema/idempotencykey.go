package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"github.com/paygate/paygate/internal/prefixid"
)

// IdempotencyKey remembers one call of an idempotent operation by its key, per principal: a keyed
// hash of the operation and its input, the resource the call made, and once the call ended, its
// outcome. It is written in the same transaction as the resource, so a call that wrote nothing
// holds no key.
type IdempotencyKey struct {
	ent.Schema
}

func (IdempotencyKey) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().NotEmpty().MaxLen(40).DefaultFunc(prefixid.Generator("idk")),
		field.String("principal").Immutable().NotEmpty(),
		field.String("key").Immutable().NotEmpty().MaxLen(255),
		field.String("request_hash").Immutable().NotEmpty(),
		// resource_id is the payment or refund the call made; a replay answers with it. Keys
		// stored before it existed have none and count as held until they expire: a retry then
		// waits rather than risk a second charge.
		field.String("resource_id").Optional().Nillable().Immutable().MaxLen(40),
		// settled_at is set when the call ended; until then the key is held and a retry waits.
		field.Time("settled_at").Optional().Nillable(),
		// error_code, error_message and error_param are the error the call ended with, if any:
		// a replay answers with it instead of the resource.
		field.String("error_code").Optional().Nillable(),
		field.String("error_message").Optional().Nillable(),
		field.String("error_param").Optional().Nillable(),
		field.Time("expires_at").Immutable(),
		field.Time("created_at").Immutable().Default(now),
	}
}

func (IdempotencyKey) Indexes() []ent.Index {
	return []ent.Index{
		// Keys are per merchant and user: a platform user acting for two merchants has two sets.
		index.Fields("merchant_id", "principal", "key").Unique(),
		index.Fields("expires_at"),
		// Recording what became of a payment or refund finds the calls that made it. The merchant
		// is in the index as the tenant rule adds it to the query: a prepared statement's generic
		// plan, made while the table was small, then has no reason to prefer the index above,
		// which would read every key of a merchant that has one merchant's worth.
		index.Fields("resource_id", "merchant_id"),
	}
}

func (IdempotencyKey) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip(entgql.SkipAll)}
}

func (IdempotencyKey) Mixin() []ent.Mixin {
	return []ent.Mixin{merchantOwned{}}
}
