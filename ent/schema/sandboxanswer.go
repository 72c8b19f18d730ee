package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// SandboxAnswer is a provider sandbox's answer to a request with an idempotency key, kept so that
// a retry through any Paygate server gets the same answer, as the real providers do.
type SandboxAnswer struct {
	ent.Schema
}

func (SandboxAnswer) Fields() []ent.Field {
	return []ent.Field{
		field.String("provider").Immutable().NotEmpty(),
		field.String("key").Immutable().NotEmpty().MaxLen(255),
		// request is a hash of what was asked, so a key sent with another request is refused.
		field.String("request").Immutable(),
		field.Int("status").Immutable(),
		field.Bytes("body").Immutable(),
		field.Time("created_at").Immutable().Default(now),
	}
}

func (SandboxAnswer) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("provider", "key").Unique(),
		index.Fields("created_at"),
	}
}

func (SandboxAnswer) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip(entgql.SkipAll)}
}
