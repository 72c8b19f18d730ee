package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// SigningKey is the public half of a key some server signs access tokens with
// (PAYGATE_JWT_PRIVATE_KEY_FILE): every server verifies the tokens of every key announced lately
// and publishes those keys at /.well-known/jwks.json, so a key replaced on some servers stays
// published until the last token it signed has expired.
type SigningKey struct {
	ent.Schema
}

func (SigningKey) Fields() []ent.Field {
	return []ent.Field{
		// id is the key's JWK thumbprint (RFC 7638): the kid its tokens name.
		field.String("id").Immutable().NotEmpty().MaxLen(64),
		// algorithm is the JWS algorithm its tokens are signed with: EdDSA or RS256.
		field.String("algorithm").Immutable().NotEmpty().MaxLen(16),
		// public_key is the public key as a JWK.
		field.Text("public_key").Immutable().NotEmpty(),
		field.Time("created_at").Immutable().Default(now),
		// announced_at is when a server last said it signs with the key: each does once a minute.
		field.Time("announced_at"),
	}
}

func (SigningKey) Indexes() []ent.Index {
	return []ent.Index{index.Fields("announced_at")}
}

func (SigningKey) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip(entgql.SkipAll)}
}
