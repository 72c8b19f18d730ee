package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"

	"github.com/paygate/paygate/internal/prefixid"
)

// User is a person who logs in to operate Paygate.
type User struct {
	ent.Schema
}

func (User) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().NotEmpty().MaxLen(40).DefaultFunc(prefixid.Generator("usr")),
		field.String("email").Unique().NotEmpty().MaxLen(254),
		field.String("password_hash").Sensitive().NotEmpty(),
		field.Enum("role").Values("admin", "operator", "developer", "viewer"),
		// disabled users cannot log in, and their tokens stop working.
		field.Bool("disabled").Default(false),
		// platform users are the platform's staff: they manage merchants, read what is
		// platform-wide, and act for any merchant.
		field.Bool("platform").Default(false),
	}
}

func (User) Mixin() []ent.Mixin {
	return []ent.Mixin{merchantOwned{}, timestamps{}}
}

func (User) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("refresh_tokens", RefreshToken.Type),
		edge.To("api_keys", APIKey.Type),
	}
}

func (User) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip(entgql.SkipAll)}
}
