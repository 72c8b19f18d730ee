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

// APIKey lets a program call Paygate on behalf of the user who made it, with some of that user's
// scopes. The key itself is shown once and kept only as a keyed hash.
type APIKey struct {
	ent.Schema
}

func (APIKey) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().NotEmpty().MaxLen(40).DefaultFunc(prefixid.Generator("key")),
		field.String("name").NotEmpty().MaxLen(100),
		// key_hash is the HMAC-SHA256 of the key under the server's API key secret: a database
		// that leaks, or that someone writes to, yields no key that works.
		field.String("key_hash").Immutable().Unique().Sensitive(),
		// prefix is the key's first characters, shown so people can tell their keys apart.
		field.String("prefix").Immutable().NotEmpty().MaxLen(40),
		field.Strings("scopes").Immutable(),
		// user_id is whose key it is: it works only while that user is enabled, and with no more
		// than that user's scopes.
		field.String("user_id").Immutable(),
		// parent_id is the key that made this one, when a program made it with a key: it never
		// outlives that key (its expiry is within the parent's, and revoking the parent revokes it).
		field.String("parent_id").Optional().Nillable().Immutable().MaxLen(40),
		field.Time("expires_at").Optional().Nillable().Immutable(),
		field.Time("revoked_at").Optional().Nillable(),
		// last_used_at is kept to the minute, so a busy key costs no write per request.
		field.Time("last_used_at").Optional().Nillable(),
	}
}

func (APIKey) Mixin() []ent.Mixin {
	return []ent.Mixin{merchantOwned{}, timestamps{}}
}

func (APIKey) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("user", User.Type).Ref("api_keys").Field("user_id").Unique().Required().Immutable(),
	}
}

func (APIKey) Indexes() []ent.Index {
	return []ent.Index{index.Fields("user_id"), index.Fields("parent_id")}
}

func (APIKey) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip(entgql.SkipAll)}
}
