package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"github.com/paygate/paygate/internal/settings"
)

// ConfigVersion is one version of the runtime configuration document. Versions are only ever
// added: the newest is in force, and the ones before it are the audit history. The version number
// is the key, so two changes made from the same version cannot both be written.
type ConfigVersion struct {
	ent.Schema
}

func (ConfigVersion) Fields() []ent.Field {
	return []ent.Field{
		field.Int("id").Immutable().Positive(),
		field.JSON("document", settings.Document{}).Immutable(),
		// changed_by is the subject of who wrote this version.
		field.String("changed_by").Immutable(),
		field.Time("created_at").Immutable().Default(now),
	}
}

func (ConfigVersion) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip(entgql.SkipAll)}
}
