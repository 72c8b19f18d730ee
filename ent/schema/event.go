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

// Event is something that happened to a payment or a refund, as merchants are told of it: written
// in the transaction of the change it tells of, kept 30 days, and delivered to every enabled
// webhook endpoint subscribed to its type.
type Event struct {
	ent.Schema
}

func (Event) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().NotEmpty().MaxLen(40).DefaultFunc(prefixid.Generator("evt")),
		field.String("type").Immutable().NotEmpty().MaxLen(50).Annotations(entgql.Skip(entgql.SkipOrderField)),
		// object_id is the id of the payment or refund the event shows.
		field.String("object_id").Immutable().NotEmpty().MaxLen(40).Annotations(entgql.Skip(entgql.SkipOrderField)),
		// body is the event exactly as it is delivered: {id, object, type, created_at, data: {object}}.
		field.Bytes("body").Immutable().Annotations(entgql.Skip(entgql.SkipAll)),
		// fanned_out is set once a delivery was queued for each endpoint subscribed to the event.
		field.Bool("fanned_out").Default(false).Annotations(entgql.Skip(entgql.SkipAll)),
		field.Time("created_at").Immutable().Default(now).Annotations(entgql.OrderField("CREATED_AT")),
	}
}

func (Event) Indexes() []ent.Index {
	return []ent.Index{
		// A merchant's list pages newest first; the live feed reads the newest of all.
		index.Fields("merchant_id", "created_at", "id"),
		index.Fields("created_at", "id"),
		index.Fields("type", "created_at"),
		index.Fields("object_id"),
		// The dispatcher reads the events not fanned out yet, oldest first: kept apart from those
		// fanned out, whose number grows with every payment, so finding them costs what is waiting.
		index.Fields("created_at", "id").StorageKey("event_waiting_created_at_id").
			Annotations(entsql.IndexWhere("NOT fanned_out")),
	}
}

func (Event) Annotations() []schema.Annotation {
	return []schema.Annotation{
		entgql.QueryField("events").Directives(hasScope("webhooks:read")),
		entgql.RelayConnection(),
	}
}

func (Event) Mixin() []ent.Mixin {
	return []ent.Mixin{merchantOwned{}, tracedCause{}}
}
