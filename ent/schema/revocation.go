package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"github.com/paygate/paygate/internal/prefixid"
)

// Revocation revokes a session (a login's refresh token family, which its access tokens name) or
// one access token before its end. Every server keeps a copy of the live ones in memory, so a
// request is checked against them without a database round trip.
type Revocation struct {
	ent.Schema
}

func (Revocation) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().NotEmpty().MaxLen(40).DefaultFunc(prefixid.Generator("rv")),
		// subject is what is revoked: a session's family id, or an access token's id.
		field.String("subject").Immutable().NotEmpty().MaxLen(60),
		// until is when the last token it revokes would have expired anyway; the row is useless
		// after.
		field.Time("until").Immutable(),
		// created_at is when it was made: servers read the revocations made since they last looked.
		field.Time("created_at").Immutable().Default(now),
	}
}

func (Revocation) Indexes() []ent.Index {
	return []ent.Index{index.Fields("created_at"), index.Fields("until")}
}

func (Revocation) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip(entgql.SkipAll)}
}
