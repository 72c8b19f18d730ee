package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"github.com/paygate/paygate/internal/prefixid"
)

// Merchant is a business that takes payments through Paygate: it owns its payments, refunds,
// events, webhook endpoints, users and API keys, and sees no other merchant's. Merchants are the
// platform's to make and disable; a disabled merchant's credentials stop working.
type Merchant struct {
	ent.Schema
}

func (Merchant) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().NotEmpty().MaxLen(40).DefaultFunc(prefixid.Generator("mer")),
		field.String("name").NotEmpty().MaxLen(100),
		field.String("status").Default("active"),
	}
}

func (Merchant) Mixin() []ent.Mixin {
	return []ent.Mixin{timestamps{}}
}

func (Merchant) Indexes() []ent.Index {
	return []ent.Index{index.Fields("created_at", "id"), index.Fields("updated_at")}
}

func (Merchant) Annotations() []schema.Annotation {
	return []schema.Annotation{
		entsql.Checks(map[string]string{"merchant_status_known": "status IN ('active', 'disabled')"}),
		entgql.Skip(entgql.SkipAll),
	}
}
