package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Revocation is a session (a login's refresh token family, which its access tokens name) or one
// access token, revoked before it would end. Every server keeps a copy of the live ones in memory,
// so a request is checked against them without a database round trip.
type Revocation struct {
	ent.Schema
}

func (Revocation) Fields() []ent.Field {
	return []ent.Field{
		// id is what is revoked: a session's family id or an access token's id.
		field.String("id").Immutable().NotEmpty().MaxLen(60),
		// until is when whatever it revokes would have expired anyway; the row is useless after.
		field.Time("until").Immutable(),
		field.Time("created_at").Immutable().Default(now),
	}
}

func (Revocation) Indexes() []ent.Index {
	return []ent.Index{index.Fields("created_at"), index.Fields("until")}
}

func (Revocation) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip(entgql.SkipAll)}
}
