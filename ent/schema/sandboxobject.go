package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// SandboxObject is a charge or refund made by one of the built-in provider sandboxes. It lives in
// Paygate's database so that several Paygate servers share one sandbox, as they would share one
// real provider: a refund sent through any server finds the charge another one made.
type SandboxObject struct {
	ent.Schema
}

func (SandboxObject) Fields() []ent.Field {
	return []ent.Field{
		// id is the provider's own id: pi_..., a pspReference, pay_...
		field.String("id").Immutable().NotEmpty().MaxLen(64),
		field.String("provider").Immutable().NotEmpty(),
		field.Enum("kind").Values("charge", "refund").Immutable(),
		// reference is Paygate's id for it (payment or refund), by which a look-up finds it.
		field.String("reference").Immutable().Default(""),
		// charge_id is the charge a refund gives back.
		field.String("charge_id").Optional().Nillable().Immutable(),
		field.Int64("amount").Immutable(),
		field.String("currency").Immutable(),
		// captured is what was captured of a charge authorised to capture manually: nil while
		// nothing was (and for a charge captured at once, whose amount is what refunds may take).
		field.Int64("captured").Optional().Nillable(),
		// refunded is what refunds took from a charge so far, pending ones included.
		field.Int64("refunded").Default(0).NonNegative(),
		field.String("status"),
		// body is the object as the provider's API shows it, for look-ups.
		field.Bytes("body"),
		field.Time("created_at").Immutable().Default(now),
		field.Time("updated_at").Default(now).UpdateDefault(now),
	}
}

func (SandboxObject) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("provider", "reference"),
		index.Fields("kind", "status", "created_at"),
	}
}

func (SandboxObject) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip(entgql.SkipAll)}
}
