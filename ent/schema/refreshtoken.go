package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"github.com/paygate/paygate/internal/prefixid"
)

// RefreshToken is one single-use refresh token, kept only as a hash. Tokens rotated from one login
// share a family, so a reused token can revoke all of them.
type RefreshToken struct {
	ent.Schema
}

func (RefreshToken) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().NotEmpty().MaxLen(40).DefaultFunc(prefixid.Generator("rt")),
		field.String("token_hash").Immutable().Unique().Sensitive(),
		field.String("family").Immutable().NotEmpty(),
		field.String("user_id").Immutable(),
		field.Time("expires_at").Immutable(),
		field.Time("used_at").Optional().Nillable(),
		field.Time("revoked_at").Optional().Nillable(),
	}
}

func (RefreshToken) Mixin() []ent.Mixin {
	return []ent.Mixin{timestamps{}}
}

func (RefreshToken) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("user", User.Type).Ref("refresh_tokens").Field("user_id").Unique().Required().Immutable(),
	}
}

func (RefreshToken) Indexes() []ent.Index {
	return []ent.Index{index.Fields("family")}
}

func (RefreshToken) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip(entgql.SkipAll)}
}
