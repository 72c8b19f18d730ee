package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"github.com/paygate/paygate/internal/prefixid"
	"github.com/paygate/paygate/internal/state"
)

// PaymentStatusChange records one move of a payment's status: from where to where, why, when and
// by whom. A payment's history is the list of them, oldest first.
type PaymentStatusChange struct {
	ent.Schema
}

func (PaymentStatusChange) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().NotEmpty().MaxLen(40).DefaultFunc(prefixid.Generator("psc")),
		field.String("payment_id").Immutable().Annotations(entgql.Skip(entgql.SkipAll)),
		// from is null on the entry that records the payment's creation.
		field.Enum("from").GoType(state.PaymentStatus("")).Optional().Nillable().Immutable().
			Annotations(entgql.Type("PaymentStatus"), entgql.Skip(entgql.SkipEnumField)),
		field.Enum("to").GoType(state.PaymentStatus("")).Immutable().
			Annotations(entgql.Type("PaymentStatus"), entgql.Skip(entgql.SkipEnumField)),
		field.String("reason").Immutable().Default(""),
		// actor is the user or API key that caused the move, or "system".
		field.String("actor").Immutable().Default("system"),
		field.Time("at").Immutable().Default(now),
	}
}

func (PaymentStatusChange) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("payment", Payment.Type).Ref("status_history").Field("payment_id").Unique().Required().Immutable().
			Annotations(entgql.Skip(entgql.SkipAll)),
	}
}

func (PaymentStatusChange) Indexes() []ent.Index {
	return []ent.Index{index.Fields("payment_id", "at")}
}

func (PaymentStatusChange) Annotations() []schema.Annotation {
	return []schema.Annotation{
		entsql.Checks(map[string]string{
			"status_change_statuses_known": `"to" IN ` + paymentStatuses + ` AND ("from" IS NULL OR "from" IN ` + paymentStatuses + `)`,
		}),
		entgql.Type("StatusChange"), entgql.Skip(entgql.SkipWhereInput, entgql.SkipOrderField),
	}
}

func (PaymentStatusChange) Mixin() []ent.Mixin {
	return []ent.Mixin{merchantOwned{}}
}
