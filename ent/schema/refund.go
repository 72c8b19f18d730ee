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

// Refund gives back part or all of a succeeded payment. Its amount is minor units of the
// payment's currency.
type Refund struct {
	ent.Schema
}

func (Refund) Fields() []ent.Field {
	hidden := entgql.Skip(entgql.SkipType, entgql.SkipWhereInput, entgql.SkipOrderField)
	return []ent.Field{
		field.String("id").Immutable().NotEmpty().MaxLen(40).DefaultFunc(prefixid.Generator("re")),
		field.String("payment_id").Immutable().Annotations(hidden),
		field.Int64("amount").Immutable().Positive().Annotations(hidden),
		field.String("currency").Immutable().MinLen(3).MaxLen(3),
		field.Enum("status").GoType(state.RefundStatus("")).
			Annotations(entgql.Type("RefundStatus"), entgql.Skip(entgql.SkipEnumField)),
		field.String("reason").Optional().Nillable().MaxRuneLen(500).
			Annotations(entgql.Skip(entgql.SkipWhereInput, entgql.SkipOrderField)),
		field.String("provider_refund_id").Optional().Nillable().Annotations(hidden),
		field.String("failure_code").Optional().Nillable().
			Annotations(entgql.Skip(entgql.SkipWhereInput, entgql.SkipOrderField)),
	}
}

func (Refund) Mixin() []ent.Mixin {
	return []ent.Mixin{merchantOwned{}, timestamps{}, tracedCause{}}
}

func (Refund) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("payment", Payment.Type).Ref("refunds").Field("payment_id").Unique().Required().Immutable(),
	}
}

func (Refund) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("payment_id", "status"),
		// Reconciliation finds the refunds still pending.
		index.Fields("status", "created_at"),
		// A provider's refund is recorded once, however often its webhooks report it.
		index.Fields("payment_id", "provider_refund_id").Unique(),
	}
}

func (Refund) Annotations() []schema.Annotation {
	return []schema.Annotation{
		entsql.Checks(map[string]string{
			"refund_amount_positive": "amount > 0",
			"refund_status_known":    "status IN ('pending', 'succeeded', 'failed')",
		}),
		entgql.Skip(entgql.SkipWhereInput, entgql.SkipOrderField),
	}
}
