package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"github.com/paygate/paygate/internal/prefixid"
)

// IdempotencyKey remembers a mutating request by its Idempotency-Key, per principal: the hash of
// the request, and once it finished, the response to replay to a retry.
type IdempotencyKey struct {
	ent.Schema
}

func (IdempotencyKey) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().NotEmpty().MaxLen(40).DefaultFunc(prefixid.Generator("idk")),
		field.String("principal").Immutable().NotEmpty(),
		field.String("key").Immutable().NotEmpty().MaxLen(255),
		field.String("request_hash").Immutable().NotEmpty(),
		// locked_at is set while a request holds the key and cleared when its response is stored.
		field.Time("locked_at").Optional().Nillable(),
		field.Int("response_status").Optional().Nillable(),
		field.Bytes("response_body").Optional().Nillable(),
		field.Time("expires_at").Immutable(),
		field.Time("created_at").Immutable().Default(now),
	}
}

func (IdempotencyKey) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("principal", "key").Unique(),
		index.Fields("expires_at"),
	}
}

func (IdempotencyKey) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip(entgql.SkipAll)}
}
