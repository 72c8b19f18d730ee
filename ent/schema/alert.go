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

// Alert is a condition someone must look at, raised by a rule: a provider's circuit open, its
// error rate high, a webhook event dead, refunds high against payments. People acknowledge and
// resolve it; its history keeps who did what and when.
type Alert struct {
	ent.Schema
}

func (Alert) Fields() []ent.Field {
	noFilter := entgql.Skip(entgql.SkipWhereInput, entgql.SkipOrderField)
	return []ent.Field{
		field.String("id").Immutable().NotEmpty().MaxLen(40).DefaultFunc(prefixid.Generator("alr")),
		field.String("rule").Immutable().NotEmpty().MaxLen(40).Annotations(entgql.Skip(entgql.SkipOrderField)),
		// subject is what the rule found the condition in: a provider, a currency.
		field.String("subject").Immutable().NotEmpty().MaxLen(40).Annotations(entgql.Skip(entgql.SkipOrderField)),
		field.Enum("severity").GoType(state.AlertSeverity("")).Immutable().
			Annotations(entgql.Type("AlertSeverity"), entgql.Skip(entgql.SkipEnumField, entgql.SkipOrderField)),
		field.Enum("status").GoType(state.AlertStatus("")).Default(string(state.AlertOpen)).
			Annotations(entgql.Type("AlertStatus"), entgql.Skip(entgql.SkipEnumField, entgql.SkipOrderField)),
		field.String("message").Immutable().NotEmpty().MaxLen(500).Annotations(noFilter),
		field.Time("opened_at").Immutable().Default(now).Annotations(entgql.OrderField("OPENED_AT")),
		field.String("acknowledged_by").Optional().Nillable().MaxLen(40).Annotations(noFilter),
		field.Time("acknowledged_at").Optional().Nillable().Annotations(noFilter),
		field.String("resolved_by").Optional().Nillable().MaxLen(40).Annotations(noFilter),
		field.Time("resolved_at").Optional().Nillable().Annotations(noFilter),
		// unresolved is rule:subject until the alert is resolved, then null: unique, so a
		// condition has one unresolved alert however many servers find it at once.
		field.String("unresolved").Optional().Nillable().Unique().MaxLen(100).Annotations(entgql.Skip(entgql.SkipAll)),
	}
}

func (Alert) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("history", AlertChange.Type).
			Annotations(entsql.OnDelete(entsql.Cascade), entgql.Skip(entgql.SkipWhereInput)),
	}
}

func (Alert) Indexes() []ent.Index {
	// The list is newest first, by status or not.
	return []ent.Index{index.Fields("opened_at", "id"), index.Fields("status", "opened_at")}
}

func (Alert) Annotations() []schema.Annotation {
	return []schema.Annotation{
		entgql.QueryField("alerts").Directives(hasScope("monitoring:read")),
		entgql.RelayConnection(),
	}
}

// AlertChange is one thing that happened to an alert: opened, acknowledged, resolved; by whom
// (a user, an API key, or system for a rule) and when.
type AlertChange struct {
	ent.Schema
}

func (AlertChange) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().NotEmpty().MaxLen(40).DefaultFunc(prefixid.Generator("alc")),
		field.String("alert_id").Immutable().Annotations(entgql.Skip(entgql.SkipAll)),
		field.Enum("action").GoType(state.AlertAction("")).Immutable().
			Annotations(entgql.Type("AlertAction"), entgql.Skip(entgql.SkipEnumField)),
		field.String("by").Immutable().NotEmpty().MaxLen(40),
		field.Time("at").Immutable().Default(now),
	}
}

func (AlertChange) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("alert", Alert.Type).Ref("history").Field("alert_id").Unique().Required().Immutable().
			Annotations(entgql.Skip(entgql.SkipAll)),
	}
}

func (AlertChange) Indexes() []ent.Index {
	return []ent.Index{index.Fields("alert_id", "at")}
}

func (AlertChange) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip(entgql.SkipWhereInput, entgql.SkipOrderField)}
}
